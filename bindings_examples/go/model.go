package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Model is a loaded PopEF model. The library's model is immutable, so any
// number of goroutines may use it at once; Close waits for calls in flight.
// Objects made from it keep what they need: it may be closed before them.
type Model struct {
	mu  sync.RWMutex
	ptr *C.mrt_model
}

func newModel(ptr *C.mrt_model) *Model {
	m := &Model{ptr: ptr}
	runtime.SetFinalizer(m, (*Model).Close)
	return m
}

// LoadModel loads the model held by one or more PopEF files.
func LoadModel(paths ...string) (*Model, error) {
	return LoadModelNamed("", paths...)
}

// LoadModelNamed loads the model whose executable is named executable from
// files holding several ("" for the only one).
func LoadModelNamed(executable string, paths ...string) (*Model, error) {
	cPaths := newCArray(paths, false)
	defer cPaths.free()
	var ptr *C.mrt_model
	err := call(func() C.mrt_status {
		if executable == "" {
			return C.mrt_model_load(cPaths.array, C.size_t(len(paths)), &ptr)
		}
		cName := C.CString(executable)
		defer C.free(unsafe.Pointer(cName))
		return C.mrt_model_load_named(cPaths.array, C.size_t(len(paths)), cName, &ptr)
	})
	if err != nil {
		return nil, err
	}
	return newModel(ptr), nil
}

// LoadModelFromMemory loads a model from the bytes of a PopEF file (copied).
func LoadModelFromMemory(data []byte) (*Model, error) {
	buffer := cBytes(data)
	defer C.free(buffer)
	var ptr *C.mrt_model
	if err := call(func() C.mrt_status { return C.mrt_model_load_from_memory(buffer, C.size_t(len(data)), &ptr) }); err != nil {
		return nil, err
	}
	return newModel(ptr), nil
}

// use runs f with the model's pointer while it is open.
func (m *Model) use(f func(*C.mrt_model) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.ptr == nil {
		return closedError("Model")
	}
	return f(m.ptr)
}

// Close releases the model; later calls return an error wrapping ErrClosed.
// Safe to call more than once and from several goroutines.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr != nil {
		C.mrt_model_destroy(m.ptr)
		m.ptr = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// BatchingDim is the dimension a ModelRunner batches requests along when
// its options leave BatchingDim nil (recorded by OnnxOptions.BatchingDim),
// or nil if the model records none (mrt_model_batching_dim).
func (m *Model) BatchingDim() (*uint32, error) {
	var dim *uint32
	err := m.use(func(p *C.mrt_model) error {
		var c C.uint32_t
		if err := call(func() C.mrt_status { return C.mrt_model_batching_dim(p, &c) }); err != nil {
			return err
		}
		if value := uint32(c); value != ^uint32(0) { // MRT_BATCHING_DISABLED
			dim = &value
		}
		return nil
	})
	return dim, err
}

// ModelInfo is the model's metadata (mrt_model_info).
type ModelInfo struct {
	Executable        string
	ReplicationFactor uint64
	NumIPUs           uint64
	IPUVersion        uint32
	IsInference       bool
	SeedHandle        string
	PackageHash       string
	NumAnchors        int
	NumPrograms       int
	NumEngineOptions  int
	NumDeviceOptions  int
	NumTensorData     int
	NumFeedData       int
}

// Info is the model's metadata.
func (m *Model) Info() (info ModelInfo, err error) {
	err = m.use(func(p *C.mrt_model) error {
		var c C.mrt_model_info
		c.struct_size = C.size_t(unsafe.Sizeof(c))
		if err := call(func() C.mrt_status { return C.mrt_model_get_info(p, &c) }); err != nil {
			return err
		}
		info = ModelInfo{C.GoString(c.executable), uint64(c.replication_factor), uint64(c.num_ipus),
			uint32(c.ipu_version), bool(c.is_inference), C.GoString(c.seed_handle), C.GoString(c.package_hash),
			int(c.num_anchors), int(c.num_programs), int(c.num_engine_options), int(c.num_device_options),
			int(c.num_tensor_data), int(c.num_feed_data)}
		return nil
	})
	return info, err
}

// TensorType is an anchor's direction seen from the device (mrt_tensor_type).
type TensorType int32

const (
	TensorInput   TensorType = 0
	TensorOutput  TensorType = 1
	TensorUnknown TensorType = 2
)

// DataSource is where an input anchor's bytes come from when the user
// provides none (mrt_data_source).
type DataSource int32

const (
	DataSourceNone       DataSource = 0
	DataSourceTensorData DataSource = 1
	DataSourceFeedData   DataSource = 2
)

// AnchorInfo describes one anchor: a tensor crossing the host/device boundary.
type AnchorInfo struct {
	Name                string
	Handle              string
	DataType            DataType
	Shape               []int64
	SizeInBytes         int64
	Programs            []uint64
	IsPerReplica        bool
	TensorType          TensorType
	DataSource          DataSource
	RemoteBuffer        string
	RemoteBufferRepeats int64
	// Replica is, for the anchor a CallbackFactory is given, the replica its
	// callback will serve (a replicated model's factory is asked once per
	// replica); 0 elsewhere.
	Replica uint32
}

func anchorInfoFromC(a *C.mrt_anchor_info) AnchorInfo {
	info := AnchorInfo{Name: C.GoString(a.name), Handle: C.GoString(a.handle), DataType: DataType(a.data_type),
		SizeInBytes: int64(a.size_in_bytes), IsPerReplica: bool(a.is_per_replica),
		TensorType: TensorType(a.tensor_type), DataSource: DataSource(a.data_source),
		RemoteBuffer: C.GoString(a.remote_buffer), RemoteBufferRepeats: int64(a.remote_buffer_repeats)}
	info.Shape = int64s(unsafe.Pointer(a.shape), int(a.rank))
	info.Programs = uint64s(unsafe.Pointer(a.programs), int(a.num_programs))
	// A library older than the field fills less of the struct.
	if uintptr(a.struct_size) >= unsafe.Offsetof(a.replica)+unsafe.Sizeof(a.replica) {
		info.Replica = uint32(a.replica)
	}
	return info
}

func int64s(p unsafe.Pointer, n int) []int64 {
	out := make([]int64, n)
	if n > 0 {
		copy(out, unsafe.Slice((*int64)(p), n))
	}
	return out
}

func uint64s(p unsafe.Pointer, n int) []uint64 {
	out := make([]uint64, n)
	if n > 0 {
		copy(out, unsafe.Slice((*uint64)(p), n))
	}
	return out
}

// Anchors are every anchor of the model, in model order.
func (m *Model) Anchors() ([]AnchorInfo, error) {
	info, err := m.Info()
	if err != nil {
		return nil, err
	}
	anchors := make([]AnchorInfo, 0, info.NumAnchors)
	for i := 0; i < info.NumAnchors; i++ {
		anchor, err := m.anchor(func(p *C.mrt_model, out *C.mrt_anchor_info) C.mrt_status {
			return C.mrt_model_anchor(p, C.size_t(i), out)
		})
		if err != nil {
			return nil, err
		}
		anchors = append(anchors, anchor)
	}
	return anchors, nil
}

// AnchorByName is the anchor named name (NotFound if none).
func (m *Model) AnchorByName(name string) (AnchorInfo, error) {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	return m.anchor(func(p *C.mrt_model, out *C.mrt_anchor_info) C.mrt_status {
		return C.mrt_model_anchor_by_name(p, cName, out)
	})
}

// AnchorByHandle is the anchor whose stream handle is handle (NotFound if none).
func (m *Model) AnchorByHandle(handle string) (AnchorInfo, error) {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	return m.anchor(func(p *C.mrt_model, out *C.mrt_anchor_info) C.mrt_status {
		return C.mrt_model_anchor_by_handle(p, cHandle, out)
	})
}

func (m *Model) anchor(get func(*C.mrt_model, *C.mrt_anchor_info) C.mrt_status) (anchor AnchorInfo, err error) {
	err = m.use(func(p *C.mrt_model) error {
		var c C.mrt_anchor_info
		c.struct_size = C.size_t(unsafe.Sizeof(c))
		if err := call(func() C.mrt_status { return get(p, &c) }); err != nil {
			return err
		}
		anchor = anchorInfoFromC(&c)
		return nil
	})
	return anchor, err
}

// TensorData is a copy of the bytes of TensorData blob name (the library's
// live only as long as the model; a Go slice may outlive it).
func (m *Model) TensorData(name string) ([]byte, error) {
	data, _, err := m.blob(name, false)
	return data, err
}

// FeedData is a copy of FeedData blob name: count tensors back to back.
func (m *Model) FeedData(name string) (data []byte, count uint64, err error) {
	return m.blob(name, true)
}

func (m *Model) blob(name string, feed bool) (data []byte, count uint64, err error) {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	err = m.use(func(p *C.mrt_model) error {
		var bytes unsafe.Pointer
		var size, num C.uint64_t
		err := call(func() C.mrt_status {
			if feed {
				return C.mrt_model_feed_data(p, cName, &bytes, &size, &num)
			}
			return C.mrt_model_tensor_data(p, cName, &bytes, &size)
		})
		if err == nil {
			data, count = goBytes(bytes, uint64(size)), uint64(num)
		}
		return err
	})
	return data, count, err
}

// ExecutableBytes is a copy of the model's serialized executable.
func (m *Model) ExecutableBytes() (data []byte, err error) {
	err = m.use(func(p *C.mrt_model) error {
		var bytes unsafe.Pointer
		var size C.uint64_t
		err := call(func() C.mrt_status { return C.mrt_model_executable(p, &bytes, &size) })
		if err == nil {
			data = goBytes(bytes, uint64(size))
		}
		return err
	})
	return data, err
}

// OptionSet names one of a model's option sets (mrt_model_options).
type OptionSet int32

const (
	EngineOptions OptionSet = 0
	DeviceOptions OptionSet = 1
)

// Options are the model's engine or device options.
func (m *Model) Options(set OptionSet) (map[string]string, error) {
	info, err := m.Info()
	if err != nil {
		return nil, err
	}
	count := info.NumEngineOptions
	if set == DeviceOptions {
		count = info.NumDeviceOptions
	}
	options := make(map[string]string, count)
	err = m.use(func(p *C.mrt_model) error {
		for i := 0; i < count; i++ {
			var key, value *C.char
			if err := call(func() C.mrt_status { return C.mrt_model_option(p, C.int32_t(set), C.size_t(i), &key, &value) }); err != nil {
				return err
			}
			options[C.GoString(key)] = C.GoString(value)
		}
		return nil
	})
	return options, err
}

// Phase is a phase of the program flow (mrt_program_phase).
type Phase int32

const (
	PhaseLoad Phase = 0
	PhaseMain Phase = 1
	PhaseSave Phase = 2
)

// ProgramFlow is the program indices of phase, in the order they run.
func (m *Model) ProgramFlow(phase Phase) (programs []uint64, err error) {
	err = m.use(func(p *C.mrt_model) error {
		var list *C.uint64_t
		var count C.size_t
		err := call(func() C.mrt_status { return C.mrt_model_program_flow(p, C.int32_t(phase), &list, &count) })
		programs = uint64s(unsafe.Pointer(list), int(count))
		return err
	})
	return programs, err
}

// Programs is the programs map: program index to name.
func (m *Model) Programs() (map[uint64]string, error) {
	info, err := m.Info()
	if err != nil {
		return nil, err
	}
	programs := make(map[uint64]string, info.NumPrograms)
	err = m.use(func(p *C.mrt_model) error {
		for i := 0; i < info.NumPrograms; i++ {
			var index C.uint64_t
			var name *C.char
			if err := call(func() C.mrt_status { return C.mrt_model_program(p, C.size_t(i), &index, &name) }); err != nil {
				return err
			}
			programs[uint64(index)] = C.GoString(name)
		}
		return nil
	})
	return programs, err
}

// Write writes the model as one PopEF file.
func (m *Model) Write(path string) error {
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	return m.use(func(p *C.mrt_model) error {
		return call(func() C.mrt_status { return C.mrt_model_write(p, cPath) })
	})
}

// WriteSplit writes the metadata and executable to modelPath and the data
// blobs to dataPath.
func (m *Model) WriteSplit(modelPath, dataPath string) error {
	cModel, cData := C.CString(modelPath), C.CString(dataPath)
	defer C.free(unsafe.Pointer(cModel))
	defer C.free(unsafe.Pointer(cData))
	return m.use(func(p *C.mrt_model) error {
		return call(func() C.mrt_status { return C.mrt_model_write_split(p, cModel, cData) })
	})
}

// Bytes is the PopEF file content Write would write.
func (m *Model) Bytes() (data []byte, err error) {
	err = m.use(func(p *C.mrt_model) error {
		var size C.size_t
		if err := call(func() C.mrt_status { return C.mrt_model_write_to_memory(p, nil, 0, &size) }); err != nil {
			return err
		}
		buffer := C.malloc(size + 1)
		defer C.free(buffer)
		if err := call(func() C.mrt_status { return C.mrt_model_write_to_memory(p, buffer, size, &size) }); err != nil {
			return err
		}
		data = goBytes(buffer, uint64(size))
		return nil
	})
	return data, err
}

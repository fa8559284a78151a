package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ModelBuilder builds a model in memory from an executable: metadata,
// anchors, program flow and data. One goroutine at a time.
type ModelBuilder struct {
	ptr *C.mrt_model_builder
}

// NewModelBuilder starts a model named name around exe (the builder keeps it).
func NewModelBuilder(name string, exe *Executable) (*ModelBuilder, error) {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	var ptr *C.mrt_model_builder
	if err := exe.do(func(p *C.mrt_executable) C.mrt_status { return C.mrt_model_builder_create(cName, p, &ptr) }); err != nil {
		return nil, err
	}
	b := &ModelBuilder{ptr: ptr}
	runtime.SetFinalizer(b, (*ModelBuilder).Close)
	return b, nil
}

// Close frees the builder. Idempotent.
func (b *ModelBuilder) Close() error {
	if b.ptr != nil {
		C.mrt_model_builder_destroy(b.ptr)
		b.ptr = nil
		runtime.SetFinalizer(b, nil)
	}
	return nil
}

func (b *ModelBuilder) do(f func(*C.mrt_model_builder) C.mrt_status) error {
	if b.ptr == nil {
		return closedError("ModelBuilder")
	}
	return call(func() C.mrt_status { return f(b.ptr) })
}

// SetProgramFlow sets the programs of phase, in run order.
func (b *ModelBuilder) SetProgramFlow(phase Phase, programs ...uint64) error {
	list := cUint64s(programs)
	defer C.free(list)
	return b.do(func(p *C.mrt_model_builder) C.mrt_status {
		return C.mrt_model_builder_set_program_flow(p, C.int32_t(phase), (*C.uint64_t)(list), C.size_t(len(programs)))
	})
}

// SetOption sets an engine or device option.
func (b *ModelBuilder) SetOption(set OptionSet, key, value string) error {
	cs := newCStrings([]string{key, value})
	defer cs.free()
	return b.do(func(p *C.mrt_model_builder) C.mrt_status {
		return C.mrt_model_builder_set_option(p, C.int32_t(set), cs[0], cs[1])
	})
}

// SetInference marks the model as inference (the default) or not.
func (b *ModelBuilder) SetInference(isInference bool) error {
	return b.do(func(p *C.mrt_model_builder) C.mrt_status {
		return C.mrt_model_builder_set_inference(p, C.bool(isInference))
	})
}

// SetSeedHandle names the random seed anchor.
func (b *ModelBuilder) SetSeedHandle(handle string) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	return b.do(func(p *C.mrt_model_builder) C.mrt_status { return C.mrt_model_builder_set_seed_handle(p, cHandle) })
}

// SetProgramName names program in the programs map.
func (b *ModelBuilder) SetProgramName(program uint64, name string) error {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	return b.do(func(p *C.mrt_model_builder) C.mrt_status {
		return C.mrt_model_builder_set_program_name(p, C.uint64_t(program), cName)
	})
}

// AnchorConfig describes one anchor; its direction, type and element count
// come from the stream or remote buffer Handle names.
type AnchorConfig struct {
	Name         string // "": Handle
	Handle       string
	Shape        []int64
	Programs     []uint64
	IsPerReplica bool
	DataSource   DataSource
}

// AddAnchor adds an anchor.
func (b *ModelBuilder) AddAnchor(anchor AnchorConfig) error {
	var c C.mrt_anchor_config
	C.mrt_anchor_config_init_sized(&c, C.size_t(unsafe.Sizeof(c)))
	c.name = optionalCString(anchor.Name)
	defer C.free(unsafe.Pointer(c.name))
	c.handle = C.CString(anchor.Handle)
	defer C.free(unsafe.Pointer(c.handle))
	shape := cInt64s(anchor.Shape)
	defer C.free(shape)
	programs := cUint64s(anchor.Programs)
	defer C.free(programs)
	c.shape, c.rank = (*C.int64_t)(shape), C.size_t(len(anchor.Shape))
	c.programs, c.num_programs = (*C.uint64_t)(programs), C.size_t(len(anchor.Programs))
	c.is_per_replica = C.bool(anchor.IsPerReplica)
	c.data_source = C.int32_t(anchor.DataSource)
	return b.do(func(p *C.mrt_model_builder) C.mrt_status { return C.mrt_model_builder_add_anchor(p, &c) })
}

// AddTensorData adds a TensorData blob (copied) of the tensor's type and shape.
func (b *ModelBuilder) AddTensorData(name string, tensor Tensor) error {
	return b.addBlob(name, tensor, false, 1)
}

// AddFeedData adds a FeedData blob (copied): count tensors of the tensor's
// type and shape, back to back in its Data.
func (b *ModelBuilder) AddFeedData(name string, tensor Tensor, count uint64) error {
	return b.addBlob(name, tensor, true, count)
}

func (b *ModelBuilder) addBlob(name string, tensor Tensor, feed bool, count uint64) error {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	shape := cInt64s(tensor.Shape)
	defer C.free(shape)
	data := cBytes(tensor.Data)
	defer C.free(data)
	return b.do(func(p *C.mrt_model_builder) C.mrt_status {
		dataType, cShape, rank, size := C.int32_t(tensor.Type), (*C.int64_t)(shape), C.size_t(len(tensor.Shape)), C.uint64_t(len(tensor.Data))
		if feed {
			return C.mrt_model_builder_add_feed_data(p, cName, dataType, cShape, rank, data, size, C.uint64_t(count))
		}
		return C.mrt_model_builder_add_tensor_data(p, cName, dataType, cShape, rank, data, size)
	})
}

// Build is the model, checked as files are when loaded.
func (b *ModelBuilder) Build() (*Model, error) {
	var ptr *C.mrt_model
	if err := b.do(func(p *C.mrt_model_builder) C.mrt_status { return C.mrt_model_builder_build(p, &ptr) }); err != nil {
		return nil, err
	}
	return newModel(ptr), nil
}

func cInt64s(values []int64) unsafe.Pointer {
	p := C.calloc(C.size_t(len(values)+1), 8)
	copy(unsafe.Slice((*int64)(p), len(values)), values)
	return p
}

package mrt

/*
#include <stdlib.h>
#include "trampolines.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// ProgressFunc reports compilation progress: step of total, on the
// compiling goroutine.
type ProgressFunc func(step, total int)

// Executable is a compiled graph and its programs; immutable, any goroutine.
type Executable struct {
	mu  sync.RWMutex
	ptr *C.mrt_executable
}

func newExecutable(ptr *C.mrt_executable) *Executable {
	e := &Executable{ptr: ptr}
	runtime.SetFinalizer(e, (*Executable).Close)
	return e
}

// Compile compiles the graph; programs[i] becomes program index i. options
// are engine options; progress may be nil. A graph compiles once.
func (g *Graph) Compile(programs []ProgramID, options map[string]string, progress ProgressFunc) (*Executable, error) {
	list, free := programIDs(programs)
	defer free()
	cOptions := newOptions(options)
	defer cOptions.free()
	var ptr *C.mrt_executable
	if err := g.do(func(p *C.mrt_graph) C.mrt_status {
		var handle C.uintptr_t
		if progress != nil {
			handle = C.uintptr_t(cgo.NewHandle(progress)) // deleted by the library
		}
		return C.gomrt_graph_compile(p, list, C.size_t(len(programs)), cOptions.array, handle, &ptr)
	}); err != nil {
		return nil, err
	}
	return newExecutable(ptr), nil
}

// DeserializeExecutable reads serialized bytes (copied), verifying them.
func DeserializeExecutable(data []byte) (*Executable, error) {
	buffer := cBytes(data)
	defer C.free(buffer)
	var ptr *C.mrt_executable
	if err := call(func() C.mrt_status { return C.mrt_executable_deserialize(buffer, C.uint64_t(len(data)), &ptr) }); err != nil {
		return nil, err
	}
	return newExecutable(ptr), nil
}

// Executable is the model's executable, deserialized and verified.
func (m *Model) Executable() (exe *Executable, err error) {
	err = m.use(func(p *C.mrt_model) error {
		var ptr *C.mrt_executable
		err := call(func() C.mrt_status { return C.mrt_model_get_executable(p, &ptr) })
		if err == nil {
			exe = newExecutable(ptr)
		}
		return err
	})
	return exe, err
}

// Close frees the executable. Idempotent.
func (e *Executable) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ptr != nil {
		C.mrt_executable_destroy(e.ptr)
		e.ptr = nil
		runtime.SetFinalizer(e, nil)
	}
	return nil
}

func (e *Executable) do(f func(*C.mrt_executable) C.mrt_status) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.ptr == nil {
		return closedError("Executable")
	}
	return call(func() C.mrt_status { return f(e.ptr) })
}

// Serialize is a copy of the executable's serialization.
func (e *Executable) Serialize() (data []byte, err error) {
	err = e.do(func(p *C.mrt_executable) C.mrt_status {
		var bytes unsafe.Pointer
		var size C.uint64_t
		status := C.mrt_executable_serialize(p, &bytes, &size)
		if status == C.MRT_OK {
			data = goBytes(bytes, uint64(size))
		}
		return status
	})
	return data, err
}

// ExecutableInfo is what an executable holds and costs (mrt_executable_info).
type ExecutableInfo struct {
	Hash               uint64
	ReplicationFactor  uint32
	NumIPUs            uint32
	NumPrograms        uint32
	NumTiles           uint32
	NumStreams         int
	NumRemoteBuffers   int
	NumHostReads       int
	NumHostWrites      int
	NumSteps           int
	TotalMemoryBytes   uint64
	MaxTileMemoryBytes uint64
	MaxMemoryTile      uint32
	BytesPerTile       uint64
}

// Info describes the executable.
func (e *Executable) Info() (info ExecutableInfo, err error) {
	var c C.mrt_executable_info
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err = e.do(func(p *C.mrt_executable) C.mrt_status { return C.mrt_executable_get_info(p, &c) })
	return ExecutableInfo{uint64(c.hash), uint32(c.replication_factor), uint32(c.num_ipus), uint32(c.num_programs),
		uint32(c.num_tiles), int(c.num_streams), int(c.num_remote_buffers), int(c.num_host_reads),
		int(c.num_host_writes), int(c.num_steps), uint64(c.total_memory_bytes), uint64(c.max_tile_memory_bytes),
		uint32(c.max_memory_tile), uint64(c.bytes_per_tile)}, err
}

// StepInfo is one program step: its kind, name and modelled cycles.
type StepInfo struct {
	Kind, Name     string
	ModelledCycles uint64
}

// Step is program step index (< Info().NumSteps).
func (e *Executable) Step(index int) (step StepInfo, err error) {
	var c C.mrt_step_info
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err = e.do(func(p *C.mrt_executable) C.mrt_status {
		status := C.mrt_executable_step(p, C.size_t(index), &c)
		if status == C.MRT_OK {
			step = StepInfo{C.GoString(c.kind), C.GoString(c.name), uint64(c.modelled_cycles)}
		}
		return status
	})
	return step, err
}

// MemoryPerTile is the bytes used on each tile of one replica.
func (e *Executable) MemoryPerTile() (bytes []uint64, err error) {
	err = e.do(func(p *C.mrt_executable) C.mrt_status {
		var list *C.uint64_t
		var count C.size_t
		status := C.mrt_executable_memory_per_tile(p, &list, &count)
		bytes = uint64s(unsafe.Pointer(list), int(count))
		return status
	})
	return bytes, err
}

// Target is the target the executable was compiled for.
func (e *Executable) Target() (*Target, error) {
	t := &Target{}
	t.c.struct_size = C.size_t(unsafe.Sizeof(t.c))
	err := e.do(func(p *C.mrt_executable) C.mrt_status { return C.mrt_executable_get_target(p, &t.c) })
	return t, err
}

// ProgramName is the name of program index program.
func (e *Executable) ProgramName(program uint32) (name string, err error) {
	err = e.do(func(p *C.mrt_executable) C.mrt_status {
		var cName *C.char
		status := C.mrt_executable_program_name(p, C.uint32_t(program), &cName)
		name = C.GoString(cName)
		return status
	})
	return name, err
}

// HandleKind is an mrt_handle_kind.
type HandleKind int32

const (
	HandleHostToDevice HandleKind = 0
	HandleDeviceToHost HandleKind = 1
	HandleRemoteBuffer HandleKind = 2
	HandleHostWrite    HandleKind = 3
	HandleHostRead     HandleKind = 4
)

// HandleInfo is a stream, remote buffer or host read/write of an executable.
type HandleInfo struct {
	Handle      string
	Kind        HandleKind
	DataType    DataType
	NumElements uint64
	Repeats     uint64
}

// Handle is handle index of kind (streams of both directions are counted
// together: Kind tells a stream's direction).
func (e *Executable) Handle(kind HandleKind, index int) (info HandleInfo, err error) {
	var c C.mrt_handle_info
	c.struct_size = C.size_t(unsafe.Sizeof(c))
	err = e.do(func(p *C.mrt_executable) C.mrt_status {
		status := C.mrt_executable_handle(p, C.int32_t(kind), C.size_t(index), &c)
		if status == C.MRT_OK {
			info = HandleInfo{C.GoString(c.handle), HandleKind(c.kind), DataType(c.data_type), uint64(c.num_elements), uint64(c.repeats)}
		}
		return status
	})
	return info, err
}

package mrt

/*
#include <stdlib.h>
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// AllReplicas addresses every replica (MRT_ALL_REPLICAS).
const AllReplicas = ^uint32(0)

// StreamCallback serves a stream of an engine: for a host-to-device stream
// it writes data, for device-to-host it reads it. data is C memory valid
// only during the call; calls for one replica never overlap.
type StreamCallback func(data []byte, replica uint32)

// Engine is an executable loaded on a device (Poplar's Engine). One
// goroutine drives it at a time; Stop may come from any.
type Engine struct {
	life    sync.RWMutex
	ptr     *C.mrt_engine
	buffers []unsafe.Pointer // of ConnectStreamToBuffer, freed with the engine
}

// NewEngine creates an engine for exe with engine options.
func NewEngine(exe *Executable, options map[string]string) (*Engine, error) {
	cOptions := newOptions(options)
	defer cOptions.free()
	var ptr *C.mrt_engine
	if err := exe.do(func(p *C.mrt_executable) C.mrt_status { return C.mrt_engine_create(p, cOptions.array, &ptr) }); err != nil {
		return nil, err
	}
	e := &Engine{ptr: ptr}
	runtime.SetFinalizer(e, (*Engine).Close)
	return e, nil
}

// Close stops a run in progress, waits for it and frees the engine. Idempotent.
func (e *Engine) Close() error {
	e.life.Lock()
	defer e.life.Unlock()
	if e.ptr != nil {
		C.mrt_engine_destroy(e.ptr)
		e.ptr = nil
		for _, buffer := range e.buffers {
			C.free(buffer)
		}
		e.buffers = nil
		runtime.SetFinalizer(e, nil)
	}
	return nil
}

func (e *Engine) do(f func(*C.mrt_engine) C.mrt_status) error {
	e.life.RLock()
	defer e.life.RUnlock()
	if e.ptr == nil {
		return closedError("Engine")
	}
	return call(func() C.mrt_status { return f(e.ptr) })
}

// Load loads the executable on device, starting afresh.
func (e *Engine) Load(device *Device) error {
	return device.use(func(d *C.mrt_device) error {
		return e.do(func(p *C.mrt_engine) C.mrt_status { return C.mrt_engine_load(p, d) })
	})
}

// Run runs program on every replica (replica AllReplicas) or one. When ctx
// ends the program stops (Stop) and the error wraps ctx.Err(); Load again
// to run.
func (e *Engine) Run(ctx context.Context, program uint32, replica uint32) error {
	return interruptible(ctx, func() { e.Stop() }, func() error {
		return e.do(func(p *C.mrt_engine) C.mrt_status {
			if replica == AllReplicas {
				return C.mrt_engine_run(p, C.uint32_t(program))
			}
			return C.mrt_engine_run_replica(p, C.uint32_t(program), C.uint32_t(replica))
		})
	})
}

// Stop asks a running program to stop; any goroutine.
func (e *Engine) Stop() error {
	return e.do(func(p *C.mrt_engine) C.mrt_status { return C.mrt_engine_stop(p) })
}

// ConnectStream connects stream handle of replica (or AllReplicas) to fn.
func (e *Engine) ConnectStream(handle string, replica uint32, fn StreamCallback) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	return e.do(func(p *C.mrt_engine) C.mrt_status {
		// The handle is made only when C gets it (which deletes it, also on failure).
		return C.gomrt_engine_connect_stream(p, cHandle, C.uint32_t(replica), C.uintptr_t(cgo.NewHandle(fn)))
	})
}

// ConnectStreamToBuffer connects stream handle of replica (or AllReplicas)
// to a circular host buffer of size bytes (a whole number of transfers),
// read or written in turn by successive transfers. The buffer is C memory
// the engine owns until Close; the returned slice views it: fill it before
// running (host-to-device) or read it after (device-to-host), never while
// a run may use it.
func (e *Engine) ConnectStreamToBuffer(handle string, replica uint32, size int) ([]byte, error) {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := C.calloc(C.size_t(size+1), 1)
	err := e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_connect_stream_to_buffer(p, cHandle, C.uint32_t(replica), buffer, C.uint64_t(size))
	})
	if err != nil {
		C.free(buffer)
		return nil, err
	}
	e.life.Lock()
	e.buffers = append(e.buffers, buffer)
	e.life.Unlock()
	return unsafe.Slice((*byte)(buffer), size), nil
}

// WriteTensor writes data to the tensor named handle (CreateHostWrite).
func (e *Engine) WriteTensor(handle string, data []byte, replica uint32) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := cBytes(data)
	defer C.free(buffer)
	return e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_write_tensor(p, cHandle, buffer, C.uint64_t(len(data)), C.uint32_t(replica))
	})
}

// ReadTensor reads the tensor named handle (CreateHostRead) into data.
func (e *Engine) ReadTensor(handle string, data []byte, replica uint32) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := C.malloc(C.size_t(len(data) + 1))
	defer C.free(buffer)
	err := e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_read_tensor(p, cHandle, buffer, C.uint64_t(len(data)), C.uint32_t(replica))
	})
	if err == nil {
		copy(data, cSlice(buffer, uint64(len(data))))
	}
	return err
}

// SetPrintCallback receives PrintTensor lines (nil: stdout).
func (e *Engine) SetPrintCallback(fn func(line string)) error {
	return e.do(func(p *C.mrt_engine) C.mrt_status {
		var h C.uintptr_t
		if fn != nil {
			h = C.uintptr_t(cgo.NewHandle(fn))
		}
		return C.gomrt_engine_set_print_callback(p, h)
	})
}

// DeviceCycles is the modelled device cycles of replica since the last load.
func (e *Engine) DeviceCycles(replica uint32) (cycles uint64, err error) {
	var c C.uint64_t
	err = e.do(func(p *C.mrt_engine) C.mrt_status { return C.mrt_engine_device_cycles(p, C.uint32_t(replica), &c) })
	return uint64(c), err
}

// CopyToRemoteBuffer writes one slot of the remote buffer named handle.
func (e *Engine) CopyToRemoteBuffer(handle string, data []byte, slot uint64, replica uint32) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := cBytes(data)
	defer C.free(buffer)
	return e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_copy_to_remote_buffer(p, cHandle, buffer, C.uint64_t(len(data)), C.uint64_t(slot), C.uint32_t(replica))
	})
}

// CopyFromRemoteBuffer reads one slot of the remote buffer named handle into data.
func (e *Engine) CopyFromRemoteBuffer(handle string, data []byte, slot uint64, replica uint32) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := C.malloc(C.size_t(len(data) + 1))
	defer C.free(buffer)
	err := e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_copy_from_remote_buffer(p, cHandle, buffer, C.uint64_t(len(data)), C.uint64_t(slot), C.uint32_t(replica))
	})
	if err == nil {
		copy(data, cSlice(buffer, uint64(len(data))))
	}
	return err
}

// InsertSimulatedError makes program step `step` on tile fail with fault
// whenever a replica runs it (after Load, not during a run).
func (e *Engine) InsertSimulatedError(fault SimulatedError, step, tile uint32) error {
	return e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_insert_simulated_error(p, C.int32_t(fault), C.uint32_t(step), C.uint32_t(tile))
	})
}

// EraseSimulatedError removes the fault at step and tile.
func (e *Engine) EraseSimulatedError(step, tile uint32) error {
	return e.do(func(p *C.mrt_engine) C.mrt_status {
		return C.mrt_engine_erase_simulated_error(p, C.uint32_t(step), C.uint32_t(tile))
	})
}

// ClearSimulatedErrors removes every simulated fault.
func (e *Engine) ClearSimulatedErrors() error {
	return e.do(func(p *C.mrt_engine) C.mrt_status { return C.mrt_engine_clear_simulated_errors(p) })
}

// ProfileFormat is an mrt_profile_format.
type ProfileFormat int32

const (
	ProfileSummary   ProfileFormat = 0 // text
	ProfileIntervals ProfileFormat = 1 // CSV
	ProfileTrace     ProfileFormat = 2 // Chrome/Perfetto trace event JSON
)

// SetProfiling turns execution profiling on or off.
func (e *Engine) SetProfiling(enabled bool) error {
	return e.do(func(p *C.mrt_engine) C.mrt_status { return C.mrt_engine_set_profiling(p, C.bool(enabled)) })
}

// WriteProfile writes the profile in format to the file path.
func (e *Engine) WriteProfile(format ProfileFormat, path string) error {
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	return e.do(func(p *C.mrt_engine) C.mrt_status { return C.mrt_engine_write_profile(p, C.int32_t(format), cPath) })
}

// Profile is the profile in format.
func (e *Engine) Profile(format ProfileFormat) (text string, err error) {
	err = e.do(func(p *C.mrt_engine) C.mrt_status {
		var length C.size_t
		if status := C.mrt_engine_profile_text(p, C.int32_t(format), nil, 0, &length); status != C.MRT_OK {
			return status
		}
		buffer := (*C.char)(C.malloc(length + 1))
		defer C.free(unsafe.Pointer(buffer))
		status := C.mrt_engine_profile_text(p, C.int32_t(format), buffer, length+1, nil)
		text = C.GoString(buffer)
		return status
	})
	return text, err
}

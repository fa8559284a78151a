package mrt

/*
#include "helpers.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// Future is the pending outcome of ExecuteAsync. Its functions may be
// called from any goroutine. Closing a pending future is safe: the request
// still completes and frees its inputs, and OnReady callbacks still run.
type Future struct {
	mu     sync.RWMutex
	ptr    *C.mrt_future
	memory *C.mrt_tensor_memory
}

// IsReady reports whether the request is done (succeeded or failed).
func (f *Future) IsReady() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.ptr != nil && bool(C.mrt_future_is_ready(f.ptr))
}

// WaitTimeout waits up to d for the request; true if it is done.
func (f *Future) WaitTimeout(d time.Duration) (bool, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return false, closedError("Future")
	}
	resultError(C.gomrt_future_wait(f.ptr, C.int64_t(d.Nanoseconds()))) // frees the message
	return bool(C.mrt_future_is_ready(f.ptr)), nil
}

// Wait waits for the request and returns its outputs (copied into Go
// memory), or its error: the code and the future's own message.
func (f *Future) Wait() (map[string][]float32, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return nil, closedError("Future")
	}
	if err := resultError(C.gomrt_future_wait(f.ptr, -1)); err != nil {
		return nil, err
	}
	var count C.size_t
	C.mrt_tensor_memory_count(f.memory, &count)
	outputs := make(map[string][]float32, int(count))
	for i := C.size_t(0); i < count; i++ {
		var view C.mrt_tensor_view
		if status := C.mrt_tensor_memory_get(f.memory, i, &view); status != C.MRT_OK {
			return nil, &Error{Code: Code(status), Message: "reading the outputs of a finished request"}
		}
		values := make([]float32, int(view.size_bytes/4))
		if len(values) > 0 {
			copy(values, unsafe.Slice((*float32)(view.data), len(values)))
		}
		outputs[C.GoString(view.name)] = values
	}
	return outputs, nil
}

// OnReady calls fn once with the request's status when it is done: at once
// on this goroutine if it already is, otherwise on a library thread. fn must
// not block for long (it holds up the replica). A panic in fn is recovered
// before it can reach C (see CaughtCallbackPanics).
func (f *Future) OnReady(fn func(status Code)) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return closedError("Future")
	}
	handle := cgo.NewHandle(fn)
	// The library deletes the handle through user_data_free (goDeleteHandle),
	// also when registration fails.
	return resultError(C.gomrt_future_on_ready(f.ptr, C.uintptr_t(handle)))
}

// Close releases the future and its outputs. Idempotent.
func (f *Future) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr != nil {
		C.mrt_future_destroy(f.ptr)
		C.mrt_tensor_memory_destroy(f.memory)
		f.ptr, f.memory = nil, nil
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

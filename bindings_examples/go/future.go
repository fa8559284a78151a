package mrt

/*
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync"
)

// Future is the pending outcome of ModelRunner.ExecuteAsync. Its methods
// may be called from any goroutine. Closing a pending future is safe: the
// request still completes and frees its inputs.
type Future struct {
	mu      sync.RWMutex
	ptr     *C.mrt_future
	outputs *C.mrt_tensor_memory
	descs   []TensorDesc
	done    chan struct{}
}

func newFuture(ptr *C.mrt_future, outputs *C.mrt_tensor_memory, descs []TensorDesc) (*Future, error) {
	f := &Future{ptr: ptr, outputs: outputs, descs: descs, done: make(chan struct{})}
	runtime.SetFinalizer(f, (*Future).Close)
	if err := f.OnReady(func(Code) { close(f.done) }); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Done is closed once the request is done (succeeded or failed).
func (f *Future) Done() <-chan struct{} { return f.done }

// Wait waits for the request until ctx ends and returns its outputs
// (copied into Go memory), or its error: the code and the future's message
// (with the recovery action of a DeviceError). When ctx ends first the
// request goes on; the error wraps ctx.Err().
func (f *Future) Wait(ctx context.Context) (map[string]Tensor, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, contextError(ctx, "waiting for a request")
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return nil, closedError("Future")
	}
	var status C.mrt_status
	if err := call(func() C.mrt_status { return C.mrt_future_status(f.ptr, &status) }); err != nil {
		return nil, err
	}
	if status != C.MRT_OK {
		return nil, &Error{Code: Code(status), Message: C.GoString(C.mrt_future_error_message(f.ptr)),
			Recovery: RecoveryAction(C.mrt_future_recovery_action(f.ptr))}
	}
	return tensorMemoryOutputs(f.outputs, f.descs)
}

// OnReady calls fn once with the request's status when it is done: at once
// on this goroutine if it already is, otherwise on a library thread. fn must
// not block for long (it holds up the replica).
func (f *Future) OnReady(fn func(status Code)) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ptr == nil {
		return closedError("Future")
	}
	handle := C.uintptr_t(cgo.NewHandle(fn)) // deleted by the library, also on failure
	return call(func() C.mrt_status { return C.gomrt_future_on_ready(f.ptr, handle) })
}

// Close releases the future and its outputs. Idempotent.
func (f *Future) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ptr != nil {
		C.mrt_future_destroy(f.ptr)
		C.mrt_tensor_memory_destroy(f.outputs)
		f.ptr, f.outputs = nil, nil
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

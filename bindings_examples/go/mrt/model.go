package mrt

/*
#include "helpers.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Model is a loaded PopEF model. The library's model is immutable, so any
// number of goroutines may use it at once; Close waits for calls in flight.
// Runners made from it keep what they need: it may be closed before them.
type Model struct {
	mu  sync.RWMutex
	ptr *C.mrt_model
}

// LoadModel loads the model of one PopEF file.
func LoadModel(path string) (*Model, error) {
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	var ptr *C.mrt_model
	if err := resultError(C.gomrt_model_load(cPath, &ptr)); err != nil {
		return nil, err
	}
	m := &Model{ptr: ptr}
	runtime.SetFinalizer(m, (*Model).Close)
	return m, nil
}

// TensorData returns a copy of TensorData blob `name` as float32 values (the
// library's bytes live only as long as the model; a Go slice may outlive it).
func (m *Model) TensorData(name string) ([]float32, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.ptr == nil {
		return nil, closedError("Model")
	}
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	var data unsafe.Pointer
	var size C.uint64_t
	if err := resultError(C.gomrt_model_tensor_data(m.ptr, cName, &data, &size)); err != nil {
		return nil, err
	}
	if size%4 != 0 {
		return nil, bindingError(InvalidArgument, "TensorData '%s' has %d bytes, not a whole number of float32", name, size)
	}
	values := make([]float32, size/4)
	if len(values) > 0 {
		copy(values, unsafe.Slice((*float32)(data), len(values)))
	}
	return values, nil
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

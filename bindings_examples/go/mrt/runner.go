package mrt

/*
#include "helpers.h"
*/
import "C"

import (
	"runtime"
	"sort"
	"sync"
	"time"
	"unsafe"
)

// RunnerOptions says how to create a ModelRunner.
type RunnerOptions struct {
	Replicas   uint32        // replicas, each on its own simulated device; 0 means 1
	DeviceWait time.Duration // how long to wait for a free device; 0: fail at once
}

// TensorDesc describes one tensor execute takes or returns.
type TensorDesc struct {
	Name        string
	SizeInBytes int64 // of one model batch
	Shape       []int64
	DataType    int32 // an mrt_data_type
}

// ModelRunner serves inference requests on a model. It is created with the
// library's thread_safe option, so any number of goroutines may call
// Execute / ExecuteAsync at once; Close waits for the calls in flight.
type ModelRunner struct {
	mu      sync.RWMutex
	ptr     *C.mrt_model_runner
	inputs  []TensorDesc
	outputs []TensorDesc
}

const dataTypeF32 = 10

// NewModelRunner creates a runner for model (options may be nil).
func NewModelRunner(model *Model, options *RunnerOptions) (*ModelRunner, error) {
	opts := RunnerOptions{Replicas: 1}
	if options != nil {
		opts = *options
		if opts.Replicas == 0 {
			opts.Replicas = 1
		}
	}
	model.mu.RLock()
	defer model.mu.RUnlock()
	if model.ptr == nil {
		return nil, closedError("Model")
	}
	var ptr *C.mrt_model_runner
	err := resultError(C.gomrt_runner_create(model.ptr, C.uint32_t(opts.Replicas), C.int64_t(opts.DeviceWait.Nanoseconds()), &ptr))
	if err != nil {
		return nil, err
	}
	r := &ModelRunner{ptr: ptr}
	runtime.SetFinalizer(r, (*ModelRunner).Close)
	if r.inputs, err = r.descs(0); err == nil {
		r.outputs, err = r.descs(1)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *ModelRunner) descs(outputs C.int) ([]TensorDesc, error) {
	var descs *C.mrt_data_desc
	var count C.size_t
	if err := resultError(C.gomrt_runner_descs(r.ptr, outputs, &descs, &count)); err != nil {
		return nil, err
	}
	list := make([]TensorDesc, 0, int(count))
	if count == 0 {
		return list, nil
	}
	for _, d := range unsafe.Slice(descs, int(count)) {
		desc := TensorDesc{Name: C.GoString(d.name), SizeInBytes: int64(d.size_in_bytes), DataType: int32(d.data_type)}
		if d.rank > 0 {
			for _, n := range unsafe.Slice(d.shape, int(d.rank)) {
				desc.Shape = append(desc.Shape, int64(n))
			}
		}
		list = append(list, desc)
	}
	return list, nil
}

// Inputs are the tensors Execute takes, in name order.
func (r *ModelRunner) Inputs() []TensorDesc { return r.inputs }

// Outputs are the tensors Execute returns, in name order.
func (r *ModelRunner) Outputs() []TensorDesc { return r.outputs }

// Execute runs one request and returns when `outputs` hold the results.
// Sizes and types of the tensors the model knows are checked here first;
// names it does not know are left to the library, which names them in its
// error. The tensors are copied to and from C memory: Go memory is never
// handed to the library beyond a call.
func (r *ModelRunner) Execute(inputs, outputs map[string][]float32) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return closedError("ModelRunner")
	}
	if err := r.checkSizes(inputs, outputs); err != nil {
		return err
	}
	inNames, inViews := toCTensors(inputs, true)
	defer C.gomrt_tensors_free(inViews, C.size_t(len(inNames)))
	outNames, outViews := toCTensors(outputs, false)
	defer C.gomrt_tensors_free(outViews, C.size_t(len(outNames)))
	err := resultError(C.gomrt_execute(r.ptr, inViews, C.size_t(len(inNames)), outViews, C.size_t(len(outNames))))
	if err != nil {
		return err
	}
	for i, view := range unsafe.Slice(outViews, len(outNames)) {
		if dst := outputs[outNames[i]]; len(dst) > 0 {
			copy(dst, unsafe.Slice((*float32)(view.data), len(dst)))
		}
	}
	return nil
}

// ExecuteAsync queues one request and returns at once. The inputs are
// copied into C memory the library frees when the request is done, so the
// caller's slices are free again right away; the outputs are allocated by
// the library (Future.Wait).
func (r *ModelRunner) ExecuteAsync(inputs map[string][]float32) (*Future, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return nil, closedError("ModelRunner")
	}
	if err := r.checkSizes(inputs, nil); err != nil {
		return nil, err
	}
	for _, desc := range r.outputs { // Future.Wait returns every output as []float32
		if desc.DataType != dataTypeF32 {
			return nil, bindingError(Unimplemented, "output '%s' has mrt_data_type %d; this binding returns float32 only", desc.Name, desc.DataType)
		}
	}
	names, views := toCTensors(inputs, true)
	var future *C.mrt_future
	var memory *C.mrt_tensor_memory
	// gomrt_execute_async owns the views from here, on success and failure.
	if err := resultError(C.gomrt_execute_async(r.ptr, views, C.size_t(len(names)), &future, &memory)); err != nil {
		return nil, err
	}
	f := &Future{ptr: future, memory: memory}
	runtime.SetFinalizer(f, (*Future).Close)
	return f, nil
}

// checkSizes refuses, before calling C, tensors the model knows whose size is
// not a whole, non-zero number of model batches, or whose batch counts differ.
func (r *ModelRunner) checkSizes(inputs, outputs map[string][]float32) error {
	batches, first := -1, ""
	check := func(descs []TensorDesc, tensors map[string][]float32, direction string) error {
		for _, desc := range descs {
			data, given := tensors[desc.Name]
			if !given {
				continue // the library reports a missing tensor itself
			}
			if desc.DataType != dataTypeF32 {
				return bindingError(InvalidArgument, "%s '%s' has mrt_data_type %d; this binding passes float32 only", direction, desc.Name, desc.DataType)
			}
			size := int64(len(data)) * 4
			if size == 0 || size%desc.SizeInBytes != 0 {
				return bindingError(InvalidArgument, "%s '%s' has %d float32 (%d bytes), expected %d bytes (shape %v) or a whole multiple", direction, desc.Name, len(data), size, desc.SizeInBytes, desc.Shape)
			}
			if n := int(size / desc.SizeInBytes); batches < 0 {
				batches, first = n, desc.Name
			} else if n != batches {
				return bindingError(InvalidArgument, "%s '%s' holds %d batches but '%s' holds %d", direction, desc.Name, n, first, batches)
			}
		}
		return nil
	}
	if err := check(r.inputs, inputs, "input"); err != nil {
		return err
	}
	return check(r.outputs, outputs, "output")
}

// toCTensors copies names (and, for inputs, the values) into C memory, in
// name order. The caller frees the views with gomrt_tensors_free.
func toCTensors(tensors map[string][]float32, copyValues bool) ([]string, *C.mrt_tensor_view) {
	names := make([]string, 0, len(tensors))
	for name := range tensors {
		names = append(names, name)
	}
	sort.Strings(names)
	views := C.gomrt_tensors_alloc(C.size_t(len(names)))
	viewSlice := unsafe.Slice(views, len(names))
	for i, name := range names {
		data := tensors[name]
		v := &viewSlice[i]
		v.name = C.CString(name)
		v.size_bytes = C.uint64_t(len(data) * 4)
		v.data = C.malloc(C.size_t(len(data)*4 + 1)) // +1: malloc(0) may return NULL
		if copyValues && len(data) > 0 {
			copy(unsafe.Slice((*float32)(v.data), len(data)), data)
		}
	}
	return names, views
}

// Close destroys the runner (pending requests complete with Cancelled; their
// futures stay usable). Idempotent; later calls return an ErrClosed error.
func (r *ModelRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		C.mrt_model_runner_destroy(r.ptr)
		r.ptr = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}

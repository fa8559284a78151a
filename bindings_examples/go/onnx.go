package mrt

/*
#include <stdlib.h>
#include "trampolines.h"
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// ONNXPrecision is the precision a compiled ONNX model computes in.
type ONNXPrecision int32

const (
	ONNXF32 ONNXPrecision = 0
	ONNXF16 ONNXPrecision = 1
)

// ONNXOptions are the options of an ONNX compilation; the zero value is
// the library's defaults.
type ONNXOptions struct {
	Target            string // a system of NewTarget; "": gc200
	CustomTarget      *Target
	NumIPUs           uint32
	ReplicationFactor uint32
	BatchSize         int64 // the value of dynamic dimensions; 0: 1
	ModelName         string
	InputShapes       map[string][]int64 // whole shapes replacing the declared ones
	Precision         ONNXPrecision
	// BatchingDim is recorded in the model as the dimension of every input
	// and output a ModelRunner batches requests along (Model.BatchingDim);
	// nil: none.
	BatchingDim *uint32
	Progress    ProgressFunc
}

// CompileONNXFile compiles the ONNX model at path into a model for the
// simulated IPU. Unimplemented lists every unsupported node.
func CompileONNXFile(path string, options *ONNXOptions) (*Model, error) {
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	return compileONNX(options, func(o *C.mrt_onnx_options, out **C.mrt_model) C.mrt_status {
		return C.mrt_onnx_compile_file(cPath, o, out)
	})
}

// CompileONNX compiles the bytes of an ONNX model (no external data).
func CompileONNX(data []byte, options *ONNXOptions) (*Model, error) {
	buffer := cBytes(data)
	defer C.free(buffer)
	return compileONNX(options, func(o *C.mrt_onnx_options, out **C.mrt_model) C.mrt_status {
		return C.mrt_onnx_compile_memory(buffer, C.size_t(len(data)), o, out)
	})
}

func compileONNX(options *ONNXOptions, compile func(*C.mrt_onnx_options, **C.mrt_model) C.mrt_status) (*Model, error) {
	if options == nil {
		options = &ONNXOptions{}
	}
	var c C.mrt_onnx_options
	C.mrt_onnx_options_init_sized(&c, C.size_t(unsafe.Sizeof(c)))
	if options.Target != "" {
		c.target = C.CString(options.Target)
		defer C.free(unsafe.Pointer(c.target))
	}
	if options.CustomTarget != nil {
		// In C memory: a Go struct passed to C may not point to Go memory.
		target := (*C.mrt_target)(C.malloc(C.sizeof_mrt_target))
		defer C.free(unsafe.Pointer(target))
		*target = options.CustomTarget.c
		c.custom_target = target
	}
	if options.NumIPUs > 0 {
		c.num_ipus = C.uint32_t(options.NumIPUs)
	}
	if options.ReplicationFactor > 0 {
		c.replication_factor = C.uint32_t(options.ReplicationFactor)
	}
	if options.BatchSize > 0 {
		c.batch_size = C.int64_t(options.BatchSize)
	}
	if options.ModelName != "" {
		c.model_name = C.CString(options.ModelName)
		defer C.free(unsafe.Pointer(c.model_name))
	}
	c.precision = C.int32_t(options.Precision)
	if options.BatchingDim != nil {
		c.batching_dim = C.uint32_t(*options.BatchingDim)
	}
	shapes := (*C.mrt_onnx_input_shape)(C.calloc(C.size_t(len(options.InputShapes)+1), C.sizeof_mrt_onnx_input_shape))
	defer C.free(unsafe.Pointer(shapes))
	list := unsafe.Slice(shapes, len(options.InputShapes))
	i := 0
	for name, dims := range options.InputShapes {
		list[i].name = C.CString(name)
		defer C.free(unsafe.Pointer(list[i].name))
		d := cInt64s(dims)
		defer C.free(d)
		list[i].dims, list[i].rank = (*C.int64_t)(d), C.size_t(len(dims))
		i++
	}
	c.input_shapes, c.num_input_shapes = shapes, C.size_t(len(options.InputShapes))
	if options.Progress != nil {
		C.gomrt_onnx_options_set_progress(&c, C.uintptr_t(cgo.NewHandle(options.Progress)))
	}
	var ptr *C.mrt_model
	if err := call(func() C.mrt_status { return compile(&c, &ptr) }); err != nil {
		return nil, err
	}
	return newModel(ptr), nil
}

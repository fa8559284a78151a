package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import (
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// FlushSelection is the queues one timeout flush pads (mrt_flush_selection),
// chosen by RunnerOptions.OnFlushSelect; valid only during that call.
// Nothing added pads every queue; once anything is added, only the added
// queues are padded. A name that is no queue of the runner is logged by the
// library and every queue padded instead.
type FlushSelection struct {
	ptr atomic.Pointer[C.mrt_flush_selection] // nil once the call returned (a kept selection may be used anywhere)
}

// AddInput pads the input queue of anchor name.
func (s *FlushSelection) AddInput(name string) error {
	return s.add(C.int32_t(C.MRT_TENSOR_INPUT), name)
}

// AddOutput pads the output queue of anchor name.
func (s *FlushSelection) AddOutput(name string) error {
	return s.add(C.int32_t(C.MRT_TENSOR_OUTPUT), name)
}

func (s *FlushSelection) add(direction C.int32_t, name string) error {
	ptr := s.ptr.Load()
	if ptr == nil {
		return bindingError(InvalidArgument, "a FlushSelection is valid only during the OnFlushSelect call")
	}
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	return call(func() C.mrt_status { return C.mrt_flush_selection_add(ptr, direction, cName) })
}

//export goRunnerFlushSelect
func goRunnerFlushSelect(tensor *C.char, selection *C.mrt_flush_selection, handle C.uintptr_t) {
	defer recoverCallback("a flush select callback")
	chosen := &FlushSelection{}
	chosen.ptr.Store(selection)
	defer chosen.ptr.Store(nil) // the library's selection ends with the call
	cgo.Handle(handle).Value().(func(string, *FlushSelection))(C.GoString(tensor), chosen)
}

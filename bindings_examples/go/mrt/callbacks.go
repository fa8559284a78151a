package mrt

// The Go functions libmrt calls (through the trampolines in helpers.c). This
// file's preamble may only declare, not define, C code: it has //export.

/*
#include <stdint.h>
#include "mrt_c.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/cgo"
	"sync/atomic"
)

var caughtPanics atomic.Int64

// CaughtCallbackPanics is how many panics of callbacks were recovered before
// they could unwind into the library (which would crash the process).
func CaughtCallbackPanics() int64 { return caughtPanics.Load() }

func recoverCallback(what string) {
	if p := recover(); p != nil {
		caughtPanics.Add(1)
		fmt.Fprintf(os.Stderr, "mrt: recovered a panic in %s: %v\n", what, p)
	}
}

// goFutureReady runs on a library thread (or the registering goroutine's):
// cgo gives it a goroutine of its own there.
//
//export goFutureReady
func goFutureReady(status C.mrt_status, handle C.uintptr_t) {
	defer recoverCallback("an OnReady callback")
	fn := cgo.Handle(handle).Value().(func(Code))
	fn(Code(status))
}

//export goLogMessage
func goLogMessage(level C.int32_t, message *C.char, handle C.uintptr_t) {
	defer recoverCallback("a log callback")
	fn := cgo.Handle(handle).Value().(func(LogLevel, string))
	fn(LogLevel(level), C.GoString(message))
}

// goDeleteHandle is every callback's user_data_free: the library calls it
// once, when it no longer needs the callback.
//
//export goDeleteHandle
func goDeleteHandle(handle C.uintptr_t) {
	cgo.Handle(handle).Delete()
}

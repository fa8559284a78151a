package mrt

// The Go functions libmrt calls, through the trampolines of trampolines.c.
// Each receives the runtime/cgo.Handle registered as user_data. This file's
// preamble may only declare, not define, C code: it has //export.

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
	"unsafe"
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

// goDeleteHandle is the user_data_free of the callbacks: the library calls
// it once, when it no longer needs the callback.
//
//export goDeleteHandle
func goDeleteHandle(handle C.uintptr_t) {
	cgo.Handle(handle).Delete()
}

//export goLogMessage
func goLogMessage(level C.int32_t, message *C.char, handle C.uintptr_t) {
	defer recoverCallback("a log callback")
	cgo.Handle(handle).Value().(func(LogLevel, string))(LogLevel(level), C.GoString(message))
}

// goFutureReady runs on a library thread (or the registering goroutine's):
// cgo gives it a goroutine of its own there.
//
//export goFutureReady
func goFutureReady(status C.mrt_status, handle C.uintptr_t) {
	defer recoverCallback("an OnReady callback")
	cgo.Handle(handle).Value().(func(Code))(Code(status))
}

// goAnchorCallback hands the stream's buffer to Go as a slice of C memory,
// valid only during the call.
//
//export goAnchorCallback
func goAnchorCallback(buffer unsafe.Pointer, size C.uint64_t, handle C.uintptr_t) {
	defer recoverCallback("an anchor callback")
	cgo.Handle(handle).Value().(AnchorCallback)(cSlice(buffer, uint64(size)))
}

// goCallbackFactory returns the handle of the anchor's callback, 0 for none.
//
//export goCallbackFactory
func goCallbackFactory(anchor *C.mrt_anchor_info, handle C.uintptr_t) (result C.uintptr_t) {
	defer recoverCallback("a callback factory")
	callback := cgo.Handle(handle).Value().(CallbackFactory)(anchorInfoFromC(anchor))
	if callback == nil {
		return 0
	}
	return C.uintptr_t(cgo.NewHandle(callback))
}

//export goPredicate
func goPredicate(anchor *C.mrt_anchor_info, handle C.uintptr_t) (policy C.int32_t) {
	policy = -1 // a panicking predicate fails the call that uses it
	defer recoverCallback("an anchor predicate")
	return C.int32_t(cgo.Handle(handle).Value().(func(AnchorInfo) int32)(anchorInfoFromC(anchor)))
}

//export goUnboundAnchor
func goUnboundAnchor(program C.uint64_t, anchor *C.mrt_anchor_info, handle C.uintptr_t) {
	defer recoverCallback("an unbound anchor visit")
	visit := cgo.Handle(handle).Value().(*[]UnboundAnchor)
	*visit = append(*visit, UnboundAnchor{Program: uint64(program), Anchor: anchorInfoFromC(anchor)})
}

//export goQueueTimeout
func goQueueTimeout(anchor *C.char, direction C.int32_t, bytesDone C.int64_t, handle C.uintptr_t) {
	defer recoverCallback("a queue timeout callback")
	cgo.Handle(handle).Value().(QueueTimeoutFunc)(C.GoString(anchor), TensorType(direction), int64(bytesDone))
}

//export goQueueEntryDone
func goQueueEntryDone(handle C.uintptr_t) {
	defer recoverCallback("a queue completion callback")
	cgo.Handle(handle).Value().(*queueEntry).complete()
}

//export goQueueEntryFree
func goQueueEntryFree(handle C.uintptr_t) {
	cgo.Handle(handle).Value().(*queueEntry).release()
	cgo.Handle(handle).Delete()
}

//export goRunnerFlush
func goRunnerFlush(tensor *C.char, handle C.uintptr_t) {
	defer recoverCallback("a flush callback")
	cgo.Handle(handle).Value().(func(string))(C.GoString(tensor))
}

//export goProgress
func goProgress(step, total C.int32_t, handle C.uintptr_t) {
	defer recoverCallback("a progress callback")
	cgo.Handle(handle).Value().(ProgressFunc)(int(step), int(total))
}

//export goStream
func goStream(data unsafe.Pointer, size C.uint64_t, replica C.uint32_t, handle C.uintptr_t) {
	defer recoverCallback("a stream callback")
	cgo.Handle(handle).Value().(StreamCallback)(cSlice(data, uint64(size)), uint32(replica))
}

//export goPrint
func goPrint(line *C.char, handle C.uintptr_t) {
	defer recoverCallback("a print callback")
	cgo.Handle(handle).Value().(func(string))(C.GoString(line))
}

// cSlice views size bytes of C memory as a slice (nil for none).
func cSlice(p unsafe.Pointer, size uint64) []byte {
	if p == nil || size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), size)
}

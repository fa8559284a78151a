// Package mrt is the Go binding of libmrt's C API (mrt_c.h), through cgo:
// models, the simulated IPU system and its devices, sessions with anchor
// callbacks and predicates, queue managers, the model runner (sync and
// async) and its statistics, logging, building and compiling graphs, engines,
// writing models, and compiling ONNX models.
//
// Rules it keeps, so that callers need not think about them:
//   - Errors are *Error values with the status Code and the library's
//     message, read on the thread of the failing call (see call). Every Code
//     is a sentinel: errors.Is(err, mrt.NotFound).
//   - Blocking calls take a context.Context; when it ends they return an
//     error wrapping ctx.Err() (and the library's Cancelled or
//     DeadlineExceeded code).
//   - Durations follow libmrt's convention through *time.Duration: nil waits
//     forever, 0 does not wait, d > 0 waits at most d.
//   - Handles have Close methods (idempotent; a call after Close returns an
//     error wrapping ErrClosed) and finalizers as a safety net.
//   - No Go pointer is kept by C: tensors the library holds beyond a call
//     are copied into C memory, callbacks travel as runtime/cgo.Handle
//     values and run on library threads; a panic in a callback is recovered
//     before it reaches C (CaughtCallbackPanics).
package mrt

/*
#cgo pkg-config: mrt
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import (
	"sort"
	"time"
	"unsafe"
)

// Major and Minor are the version of the header this package was built
// against (MRT_VERSION_MAJOR, MRT_VERSION_MINOR).
const (
	Major = int(C.MRT_VERSION_MAJOR)
	Minor = int(C.MRT_VERSION_MINOR)
)

// CheckVersion checks that the loaded libmrt serves callers built for major.minor.
func CheckVersion(major, minor int) error {
	return call(func() C.mrt_status { return C.mrt_check_version(C.int(major), C.int(minor)) })
}

// Version is the loaded library's "MAJOR.MINOR.PATCH".
func Version() string {
	return C.GoString(C.mrt_version_string())
}

// SetHostMemoryLimit sets the process-wide limit of host memory the
// simulated devices may reserve (0 restores the default).
func SetHostMemoryLimit(bytes uint64) { C.mrt_set_host_memory_limit(C.uint64_t(bytes)) }

// HostMemoryLimit is the limit in force.
func HostMemoryLimit() uint64 { return uint64(C.mrt_host_memory_limit()) }

// HostMemoryReserved is what live objects reserve now.
func HostMemoryReserved() uint64 { return uint64(C.mrt_host_memory_reserved()) }

// For is a *time.Duration for the optional durations of this package:
// mrt.For(time.Second). nil waits forever.
func For(d time.Duration) *time.Duration { return &d }

// cStrings is a C copy of strings; free releases it.
type cStrings []*C.char

func newCStrings(values []string) cStrings {
	s := make(cStrings, len(values))
	for i, v := range values {
		s[i] = C.CString(v)
	}
	return s
}

func (s cStrings) free() {
	for _, p := range s {
		C.free(unsafe.Pointer(p))
	}
}

// cArray is a NULL-terminated C array of C strings (the library's
// key/value option lists), or NULL for an empty map.
type cArray struct {
	strings cStrings
	array   **C.char
}

func newOptions(options map[string]string) cArray {
	if len(options) == 0 {
		return cArray{}
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, options[k])
	}
	return newCArray(pairs, true)
}

// newCArray copies values into C memory: the array and its strings, with a
// terminating NULL if nullTerminated.
func newCArray(values []string, nullTerminated bool) cArray {
	strings := newCStrings(values)
	n := len(strings)
	if nullTerminated {
		n++
	}
	array := (**C.char)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	copy(unsafe.Slice(array, n), strings)
	return cArray{strings: strings, array: array}
}

func (a cArray) free() {
	a.strings.free()
	C.free(unsafe.Pointer(a.array))
}

// cString is a C copy of s, "" as NULL where the library allows it.
func optionalCString(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

// cBytes is a C copy of data (at least one byte, so never NULL).
func cBytes(data []byte) unsafe.Pointer {
	p := C.malloc(C.size_t(len(data) + 1))
	copy(unsafe.Slice((*byte)(p), len(data)), data)
	return p
}

// goBytes is a Go copy of size bytes at p.
func goBytes(p unsafe.Pointer, size uint64) []byte {
	out := make([]byte, size)
	if size > 0 {
		copy(out, unsafe.Slice((*byte)(p), size))
	}
	return out
}

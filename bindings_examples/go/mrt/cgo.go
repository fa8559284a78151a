// Package mrt is a Go binding of libmrt's C API (mrt_c.h), through cgo.
//
// Rules it keeps, so that callers need not think about them:
//   - Errors are *Error values with the status Code and the library's
//     message, read in the same cgo call as the failing function (helpers.c):
//     a goroutine can move between OS threads between two cgo calls, and the
//     library's message is per thread.
//   - Handles have Close methods (idempotent; a call after Close returns an
//     error wrapping ErrClosed) and finalizers as a safety net.
//   - No Go pointer is kept by C: tensors are copied into C memory for each
//     request, callbacks travel as runtime/cgo.Handle values.
package mrt

/*
#cgo pkg-config: mrt
#include "helpers.h"
*/
import "C"

import (
	"unsafe"
)

// resultError turns a helper's result into a Go error (nil for MRT_OK) and
// frees the copied message.
func resultError(result C.gomrt_result) error {
	if result.message != nil {
		defer C.free(unsafe.Pointer(result.message))
	}
	if result.status == C.MRT_OK {
		return nil
	}
	message := "(no message)"
	if result.message != nil {
		message = C.GoString(result.message)
	}
	return &Error{Code: Code(result.status), Message: message}
}

// CheckVersion checks that the loaded libmrt serves callers built for major.minor.
func CheckVersion(major, minor int) error {
	return resultError(C.gomrt_check_version(C.int(major), C.int(minor)))
}

// Version is the loaded library's "MAJOR.MINOR.PATCH".
func Version() string {
	return C.GoString(C.mrt_version_string())
}

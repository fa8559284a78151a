package mrt

/*
#include <stdlib.h>
#include "mrt_c.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Code is a libmrt status code (mrt_status); the values never change.
//
// Each Code is also the sentinel error of its status, as syscall.Errno is:
// errors.Is(err, mrt.NotFound) holds for any *Error with that code.
type Code int32

const (
	OK                 Code = 0
	InvalidArgument    Code = 1
	NotFound           Code = 2
	FailedPrecondition Code = 3
	ResourceExhausted  Code = 4
	DeadlineExceeded   Code = 5
	Cancelled          Code = 6
	Unavailable        Code = 7
	DeviceError        Code = 8
	CorruptModel       Code = 9
	VersionMismatch    Code = 10
	Unimplemented      Code = 11
	Internal           Code = 12
)

// String is the library's name and meaning of the code, e.g.
// "MRT_NOT_FOUND: not found".
func (c Code) String() string {
	return C.GoString(C.mrt_status_string(C.mrt_status(c)))
}

// Error makes the code a sentinel error (see Code).
func (c Code) Error() string { return c.String() }

// RecoveryAction is what a device needs after a DeviceError before it runs
// again (mrt_recovery_action).
type RecoveryAction int32

const (
	RecoveryNone           RecoveryAction = 0
	RecoveryIPUReset       RecoveryAction = 1
	RecoveryPartitionReset RecoveryAction = 2
	RecoveryFullReset      RecoveryAction = 3
)

// Error is a failed libmrt call: its status code, the library's message
// naming the bad value, and for DeviceError the recovery action.
//
// errors.Is(err, code) matches its Code; errors.Is also matches
// context.DeadlineExceeded for DeadlineExceeded and context.Canceled for a
// call a context cancelled. errors.As(err, &mrtErr) gives the details.
type Error struct {
	Code     Code
	Message  string
	Recovery RecoveryAction
	wrapped  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s", e.Code, e.Message)
}

// Is matches the error's Code, and the context errors of the same meaning.
func (e *Error) Is(target error) bool {
	switch target {
	case e.Code:
		return true
	case context.DeadlineExceeded:
		return e.Code == DeadlineExceeded
	}
	return false
}

// Unwrap gives what the error wraps: ErrClosed for a call after Close, the
// context's error for a call its context ended.
func (e *Error) Unwrap() error { return e.wrapped }

// ErrClosed is wrapped by the error of any call on a closed handle.
var ErrClosed = errors.New("mrt: handle used after Close")

func closedError(what string) error {
	return &Error{Code: FailedPrecondition, Message: what + " used after Close", wrapped: ErrClosed}
}

func bindingError(code Code, format string, args ...interface{}) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...) + " (checked by the Go binding)"}
}

// contextError is the error of a call the context ended: it carries the
// library's code (Cancelled or DeadlineExceeded) and wraps ctx.Err().
func contextError(ctx context.Context, what string) error {
	code := Cancelled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = DeadlineExceeded
	}
	return &Error{Code: code, Message: what + ": " + ctx.Err().Error(), wrapped: ctx.Err()}
}

// call runs one libmrt function and turns its status into an error. libmrt
// keeps the last error message per OS thread and a goroutine may move
// between threads from one cgo call to the next, so the goroutine stays on
// its thread until the message is read.
func call(f func() C.mrt_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.MRT_OK {
		return nil
	}
	return lastError(Code(status))
}

// lastError is this thread's message for a call that failed with code.
func lastError(code Code) error {
	var length C.size_t
	message := "(no message)"
	if C.mrt_last_error_message_copy(nil, 0, &length) == C.MRT_OK && length > 0 {
		buffer := (*C.char)(C.malloc(length + 1))
		defer C.free(unsafe.Pointer(buffer))
		if C.mrt_last_error_message_copy(buffer, length+1, nil) == C.MRT_OK {
			message = C.GoString(buffer)
		}
	}
	return &Error{Code: code, Message: message, Recovery: RecoveryAction(C.mrt_last_error_recovery_action())}
}

// interruptible runs the blocking call f; if ctx ends while f runs, interrupt
// (Stop, Disconnect) makes f return Cancelled, and the error then wraps
// ctx.Err() too.
func interruptible(ctx context.Context, interrupt func(), f func() error) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			interrupt()
		case <-done:
		}
	}()
	err := f()
	var mrtErr *Error
	if ctx.Err() != nil && errors.As(err, &mrtErr) && mrtErr.Code == Cancelled {
		mrtErr.wrapped = ctx.Err()
	}
	return err
}

package mrt

/*
#include "mrt_c.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Code is a libmrt status code (mrt_status); the values never change.
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

// Error is a failed libmrt call: its status code and message.
type Error struct {
	Code    Code
	Message string
	wrapped error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s", e.Code, e.Message)
}

// Unwrap lets errors.Is(err, ErrClosed) recognise use after Close.
func (e *Error) Unwrap() error { return e.wrapped }

// ErrClosed is wrapped by the error of any call on a closed handle.
var ErrClosed = errors.New("mrt: handle used after Close")

func closedError(what string) error {
	return &Error{Code: FailedPrecondition, Message: what + " used after Close", wrapped: ErrClosed}
}

func bindingError(code Code, format string, args ...interface{}) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...) + " (checked by the Go binding)"}
}

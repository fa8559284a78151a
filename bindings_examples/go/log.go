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

// LogLevel is an mrt_log_level.
type LogLevel int32

const (
	LogOff   LogLevel = 0
	LogErr   LogLevel = 1
	LogWarn  LogLevel = 2
	LogInfo  LogLevel = 3
	LogDebug LogLevel = 4
	LogTrace LogLevel = 5
)

// SetLogLevel sets libmrt's verbosity.
func SetLogLevel(level LogLevel) error {
	return call(func() C.mrt_status { return C.mrt_set_log_level(C.int32_t(level)) })
}

// GetLogLevel is libmrt's verbosity.
func GetLogLevel() LogLevel { return LogLevel(C.mrt_get_log_level()) }

// LogMessage emits message through libmrt's logger.
func LogMessage(level LogLevel, message string) error {
	cMessage := C.CString(message)
	defer C.free(unsafe.Pointer(cMessage))
	return call(func() C.mrt_status { return C.mrt_log_message(C.int32_t(level), cMessage) })
}

// SetLogCallback sends libmrt's log messages to fn (nil restores the default
// destination). fn runs on whichever thread logs, never two calls at once; it
// must not call SetLogCallback. The library drops the previous callback's
// handle once its last call has returned.
func SetLogCallback(fn func(level LogLevel, message string)) error {
	if fn == nil {
		return call(func() C.mrt_status { return C.gomrt_set_log_callback(0) })
	}
	handle := C.uintptr_t(cgo.NewHandle(fn))
	return call(func() C.mrt_status { return C.gomrt_set_log_callback(handle) })
}

package mrt

/*
#include <stdlib.h>
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// AnchorCallback serves one anchor's stream: for an input it writes the
// bytes the device reads into buffer, for an output it reads what the
// device wrote. buffer is C memory valid only during the call. It runs on
// the goroutine running the session's programs, in program order.
type AnchorCallback func(buffer []byte)

// CallbackFactory gives an anchor's callback, or nil to keep its binding.
type CallbackFactory func(anchor AnchorInfo) AnchorCallback

// SessionOptions are a session's options; the zero value is the library's
// defaults except as noted.
type SessionOptions struct {
	// Immediate gets a free device for the model at creation (Unavailable if
	// none is); otherwise (the default) the caller binds one with BindToDevice.
	Immediate bool
	// PredTensorData picks the inputs that use the model's TensorData/FeedData
	// (kind PredicatePopefDataUsage); nil: all.
	PredTensorData *AnchorPredicate
	// SkipPackageHashCheck accepts a model built for another runtime package.
	SkipPackageHashCheck bool
	// MaxLookAheadSyncs is how many host syncs are prepared ahead; nil: unlimited.
	MaxLookAheadSyncs *int64
}

// Session links one model to one device: it loads the executable, binds
// every anchor's stream and runs the Load, Main and Save programs. Stop,
// IsStopped and NumReplicas may be called from any goroutine at any time;
// RunMainProgramsForReplica of distinct replicas run at once; the other
// calls are serialized.
//
// A model compiled with replication factor R (NumReplicas) has a stream per
// anchor per replica: SetReplicaCallbackForAnchor and
// CreateQueueManagerForReplica address one replica, factories are asked
// once per replica (AnchorInfo.Replica), and RunMainProgramsForReplica
// serves one replica on the calling goroutine.
type Session struct {
	life sync.RWMutex // Close against every call
	// BindToDevice and Reload against DeviceCycles (taken after life).
	loading sync.RWMutex
	// One call at a time (Stop excepted), but runs of replicas share it.
	mu sync.RWMutex
	// [replica]: one run of each replica at a time.
	replicaMu []sync.Mutex
	ptr       *C.mrt_session
}

// NewSession makes a session of model.
func NewSession(model *Model, options *SessionOptions) (*Session, error) {
	return newSession(options, func(config *C.mrt_session_config, out **C.mrt_session) error {
		return model.use(func(mp *C.mrt_model) error {
			return call(func() C.mrt_status { return C.mrt_session_create(mp, config, out) })
		})
	})
}

// NewSessionFromFiles makes a session of the model held by PopEF files
// (mrt_session_create_from_files).
func NewSessionFromFiles(paths []string, options *SessionOptions) (*Session, error) {
	return newSession(options, func(config *C.mrt_session_config, out **C.mrt_session) error {
		cPaths := newCArray(paths, false)
		defer cPaths.free()
		return call(func() C.mrt_status {
			return C.mrt_session_create_from_files(cPaths.array, C.size_t(len(paths)), config, out)
		})
	})
}

// newSession fills the config from options and creates the session with create.
func newSession(options *SessionOptions, create func(*C.mrt_session_config, **C.mrt_session) error) (*Session, error) {
	if options == nil {
		options = &SessionOptions{}
	}
	var config C.mrt_session_config
	C.mrt_session_config_init_sized(&config, C.size_t(unsafe.Sizeof(config)))
	if options.Immediate {
		config.policy = C.MRT_LAUNCH_IMMEDIATE
	}
	config.check_package_hash = C.bool(!options.SkipPackageHashCheck)
	if options.MaxLookAheadSyncs != nil {
		config.max_look_ahead_syncs = C.int64_t(*options.MaxLookAheadSyncs)
	}
	var ptr *C.mrt_session
	var err error
	if options.PredTensorData != nil {
		err = options.PredTensorData.use(func(pp *C.mrt_anchor_predicate) error {
			config.pred_tensor_data = pp
			return create(&config, &ptr)
		})
	} else {
		err = create(&config, &ptr)
	}
	if err != nil {
		return nil, err
	}
	var replicas C.uint32_t
	if err := call(func() C.mrt_status { return C.mrt_session_num_replicas(ptr, &replicas) }); err != nil {
		C.mrt_session_destroy(ptr)
		return nil, err
	}
	s := &Session{ptr: ptr, replicaMu: make([]sync.Mutex, int(replicas))}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// Close leaves the device (without running Save) and frees the session and
// its callbacks. Idempotent.
func (s *Session) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.ptr != nil {
		C.mrt_session_destroy(s.ptr)
		s.ptr = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// do runs one serialized call on the open session.
func (s *Session) do(f func(*C.mrt_session) C.mrt_status) error {
	return s.serialized(false, f)
}

// serialized runs f alone on the open session; loading: a call that
// (re)loads the executable, which DeviceCycles must not overlap either.
func (s *Session) serialized(loading bool, f func(*C.mrt_session) C.mrt_status) error {
	s.life.RLock()
	defer s.life.RUnlock()
	if loading {
		s.loading.Lock()
		defer s.loading.Unlock()
	}
	if s.ptr == nil {
		return closedError("Session")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return call(func() C.mrt_status { return f(s.ptr) })
}

// Model is the session's model (a new reference: Close it).
func (s *Session) Model() (*Model, error) {
	var ptr *C.mrt_model
	if err := s.do(func(p *C.mrt_session) C.mrt_status { return C.mrt_session_model(p, &ptr) }); err != nil {
		return nil, err
	}
	return newModel(ptr), nil
}

// BindToDevice binds the session to device and loads the executable; the
// session keeps its own reference to the device.
func (s *Session) BindToDevice(device *Device) error {
	return device.use(func(dp *C.mrt_device) error {
		return s.load(func(p *C.mrt_session) C.mrt_status { return C.mrt_session_bind_to_device(p, dp) })
	})
}

// load runs a call that (re)loads the executable.
func (s *Session) load(f func(*C.mrt_session) C.mrt_status) error {
	return s.serialized(true, f)
}

// UnloadFromDevice runs Save if Load has run and leaves the device.
func (s *Session) UnloadFromDevice() error {
	return s.do(func(p *C.mrt_session) C.mrt_status { return C.mrt_session_unload_from_device(p) })
}

// Reload loads the executable again on the last device, resetting it (after
// Stop or a device error).
func (s *Session) Reload() error {
	return s.load(func(p *C.mrt_session) C.mrt_status { return C.mrt_session_reload(p) })
}

// run runs programs; ctx ending stops them (Stop), and the error then wraps ctx.Err().
func (s *Session) run(ctx context.Context, f func(*C.mrt_session) C.mrt_status) error {
	return interruptible(ctx, func() { s.Stop() }, func() error { return s.do(f) })
}

// RunLoadPrograms runs the Load phase on this goroutine (the goroutine the
// anchor callbacks and queue transfers run on). When ctx ends the programs
// stop at their next host sync: the error wraps ctx.Err() and the session
// needs Reload.
func (s *Session) RunLoadPrograms(ctx context.Context) error {
	return s.run(ctx, func(p *C.mrt_session) C.mrt_status { return C.mrt_session_run_load_programs(p) })
}

// RunMainPrograms runs the Main phase (Load first if it has not run), as RunLoadPrograms.
func (s *Session) RunMainPrograms(ctx context.Context) error {
	return s.run(ctx, func(p *C.mrt_session) C.mrt_status { return C.mrt_session_run_main_programs(p) })
}

// RunMainProgramsForReplica runs the Main phase of replica `replica` (0 ..
// NumReplicas()-1) only, Load first if it has not run on it, as
// RunLoadPrograms: the replica's callbacks and queue transfers run on this
// goroutine. Runs of distinct replicas proceed at once, each on its own
// goroutine; runs of one replica, and the session's other calls, wait their
// turn. When ctx ends the session stops (every replica's run ends) and
// needs Reload.
func (s *Session) RunMainProgramsForReplica(ctx context.Context, replica uint32) error {
	return interruptible(ctx, func() { s.Stop() }, func() error {
		s.life.RLock()
		defer s.life.RUnlock()
		if s.ptr == nil {
			return closedError("Session")
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		if int(replica) < len(s.replicaMu) { // otherwise the library names the bad replica
			s.replicaMu[replica].Lock()
			defer s.replicaMu[replica].Unlock()
		}
		return call(func() C.mrt_status { return C.mrt_session_run_main_programs_for_replica(s.ptr, C.uint32_t(replica)) })
	})
}

// NumReplicas is the model's replication factor R: replicas 0 .. R-1 (1
// for a model that is not replicated). Any goroutine, any time.
func (s *Session) NumReplicas() (uint32, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.ptr == nil {
		return 0, closedError("Session")
	}
	return uint32(len(s.replicaMu)), nil
}

// DeviceCycles is a replica's modelled device time (mrt_session_device_cycles):
// (Cycles after - Cycles before) / ClockHz is the modelled time of the runs
// in between.
type DeviceCycles struct {
	Cycles  uint64  // run since the executable was last loaded (0 before)
	ClockHz float64 // the device's clock
}

// DeviceCycles is the modelled cycles replica `replica` (0 .. NumReplicas()-1)
// of the session's device has run since the executable was last loaded
// (Load and Main runs, transfers, exchange and syncs), and its clock. Any
// goroutine, also while another runs the session's programs (it waits for
// BindToDevice and Reload). InvalidArgument naming the replica if it is out
// of range.
func (s *Session) DeviceCycles(replica uint32) (DeviceCycles, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	s.loading.RLock()
	defer s.loading.RUnlock()
	if s.ptr == nil {
		return DeviceCycles{}, closedError("Session")
	}
	var cycles C.uint64_t
	var clockHz C.double
	err := call(func() C.mrt_status {
		return C.mrt_session_device_cycles(s.ptr, C.uint32_t(replica), &cycles, &clockHz)
	})
	return DeviceCycles{Cycles: uint64(cycles), ClockHz: float64(clockHz)}, err
}

// RunSavePrograms runs the Save phase, as RunLoadPrograms.
func (s *Session) RunSavePrograms(ctx context.Context) error {
	return s.run(ctx, func(p *C.mrt_session) C.mrt_status { return C.mrt_session_run_save_programs(p) })
}

// RunPrograms runs each program once, in order, as RunLoadPrograms.
func (s *Session) RunPrograms(ctx context.Context, programs ...uint64) error {
	cPrograms := cUint64s(programs)
	defer C.free(cPrograms)
	return s.run(ctx, func(p *C.mrt_session) C.mrt_status {
		return C.mrt_session_run_programs(p, (*C.uint64_t)(cPrograms), C.size_t(len(programs)))
	})
}

// Stop stops running programs at their next host sync (the run returns
// Cancelled) and every later run until Reload. Any goroutine, any time.
func (s *Session) Stop() error {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.ptr == nil {
		return closedError("Session")
	}
	return call(func() C.mrt_status { return C.mrt_session_stop(s.ptr) })
}

// IsStopped reports whether Stop was called since the last (re)load.
func (s *Session) IsStopped() (bool, error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.ptr == nil {
		return false, closedError("Session")
	}
	var stopped C.bool
	err := call(func() C.mrt_status { return C.mrt_session_is_stopped(s.ptr, &stopped) })
	return bool(stopped), err
}

// SetCallbackForAnchor binds fn (nil: an empty callback) to the stream of
// the anchor with handle anchorHandle: on a replicated model, of every
// replica (fn is then called from each replica's thread, concurrently).
func (s *Session) SetCallbackForAnchor(anchorHandle string, fn AnchorCallback) error {
	cHandle := C.CString(anchorHandle)
	defer C.free(unsafe.Pointer(cHandle))
	if fn == nil {
		return s.do(func(p *C.mrt_session) C.mrt_status {
			return C.mrt_session_set_callback_for_anchor(p, cHandle, nil, nil, nil)
		})
	}
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.gomrt_session_set_callback_for_anchor(p, cHandle, C.uintptr_t(cgo.NewHandle(fn)))
	})
}

// SetReplicaCallbackForAnchor is SetCallbackForAnchor for replica `replica`
// (0 .. NumReplicas()-1) only.
func (s *Session) SetReplicaCallbackForAnchor(anchorHandle string, replica uint32, fn AnchorCallback) error {
	cHandle := C.CString(anchorHandle)
	defer C.free(unsafe.Pointer(cHandle))
	if fn == nil {
		return s.do(func(p *C.mrt_session) C.mrt_status {
			return C.mrt_session_set_replica_callback_for_anchor(p, cHandle, C.uint32_t(replica), nil, nil, nil)
		})
	}
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.gomrt_session_set_replica_callback_for_anchor(p, cHandle, C.uint32_t(replica),
			C.uintptr_t(cgo.NewHandle(fn)))
	})
}

// SetRemoteBufferData fills the remote buffer of anchor anchorHandle from
// data (copied), now and at every later load.
func (s *Session) SetRemoteBufferData(anchorHandle string, data []byte) error {
	cHandle := C.CString(anchorHandle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := cBytes(data)
	defer C.free(buffer)
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.mrt_session_set_remote_buffer_data(p, cHandle, buffer, C.uint64_t(len(data)))
	})
}

// SetUserInputHandler asks factory for the callback of each input anchor
// the predicate (kind PredicateAnchorCallback; nil: all) gives
// BindUserCallback, unless skipConnected and the anchor has a binding.
// factory runs on this goroutine, before this returns.
func (s *Session) SetUserInputHandler(factory CallbackFactory, predicate *AnchorPredicate, skipConnected bool) error {
	return s.setUserHandler(0, factory, predicate, skipConnected)
}

// SetUserOutputHandler is SetUserInputHandler for the output anchors.
func (s *Session) SetUserOutputHandler(factory CallbackFactory, predicate *AnchorPredicate, skipConnected bool) error {
	return s.setUserHandler(1, factory, predicate, skipConnected)
}

func (s *Session) setUserHandler(outputs C.int, factory CallbackFactory, predicate *AnchorPredicate, skipConnected bool) error {
	if predicate != nil {
		predicate.mu.RLock()
		defer predicate.mu.RUnlock()
		if predicate.ptr == nil {
			return closedError("AnchorPredicate")
		}
	}
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.gomrt_session_set_user_handler(p, outputs, C.uintptr_t(cgo.NewHandle(factory)), predicate.cPointer(),
			C.bool(skipConnected))
	})
}

// AnchorSet selects the anchors Session.Anchors lists (mrt_session_anchor_set).
type AnchorSet int32

const (
	InputAnchors      AnchorSet = 0
	UserInputAnchors  AnchorSet = 1
	UserOutputAnchors AnchorSet = 2
)

// Anchors lists the anchors of set, in model order.
func (s *Session) Anchors(set AnchorSet) ([]AnchorInfo, error) {
	var anchors []AnchorInfo
	err := s.do(func(p *C.mrt_session) C.mrt_status {
		var count C.size_t
		if status := C.mrt_session_anchor_count(p, C.int32_t(set), &count); status != C.MRT_OK {
			return status
		}
		for i := C.size_t(0); i < count; i++ {
			var c C.mrt_anchor_info
			c.struct_size = C.size_t(unsafe.Sizeof(c))
			if status := C.mrt_session_anchor(p, C.int32_t(set), i, &c); status != C.MRT_OK {
				return status
			}
			anchors = append(anchors, anchorInfoFromC(&c))
		}
		return C.MRT_OK
	})
	return anchors, err
}

// UnboundAnchor is an anchor with a stream and no binding, moved by Program.
type UnboundAnchor struct {
	Program uint64
	Anchor  AnchorInfo
}

// AnchorsNotConnected lists, per program, the anchors moved by it that have
// a stream and no binding.
func (s *Session) AnchorsNotConnected(programs ...uint64) ([]UnboundAnchor, error) {
	cPrograms := cUint64s(programs)
	defer C.free(cPrograms)
	var found []UnboundAnchor
	handle := cgo.NewHandle(&found)
	defer handle.Delete()
	err := s.do(func(p *C.mrt_session) C.mrt_status {
		return C.gomrt_session_anchors_not_connected(p, (*C.uint64_t)(cPrograms), C.size_t(len(programs)),
			C.uintptr_t(handle), nil)
	})
	return found, err
}

// ErrorIfAnchorsNotConnected fails with FailedPrecondition listing each
// program's unbound anchors, if any.
func (s *Session) ErrorIfAnchorsNotConnected(programs ...uint64) error {
	cPrograms := cUint64s(programs)
	defer C.free(cPrograms)
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.mrt_session_error_if_anchors_not_connected(p, (*C.uint64_t)(cPrograms), C.size_t(len(programs)))
	})
}

// SimulatedError is a simulated hardware fault (mrt_simulated_error).
type SimulatedError int32

const (
	SimulatedTileException SimulatedError = 0
	SimulatedMemoryParity  SimulatedError = 1
	SimulatedExchangeError SimulatedError = 2
	SimulatedHostLinkError SimulatedError = 3
)

// InsertSimulatedError makes program step `step` on tile fail with fault
// whenever the session runs it, until erased.
func (s *Session) InsertSimulatedError(fault SimulatedError, step, tile uint32) error {
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.mrt_session_insert_simulated_error(p, C.int32_t(fault), C.uint32_t(step), C.uint32_t(tile))
	})
}

// EraseSimulatedError removes the fault at step and tile.
func (s *Session) EraseSimulatedError(step, tile uint32) error {
	return s.do(func(p *C.mrt_session) C.mrt_status {
		return C.mrt_session_erase_simulated_error(p, C.uint32_t(step), C.uint32_t(tile))
	})
}

// ClearSimulatedErrors removes every simulated fault.
func (s *Session) ClearSimulatedErrors() error {
	return s.do(func(p *C.mrt_session) C.mrt_status { return C.mrt_session_clear_simulated_errors(p) })
}

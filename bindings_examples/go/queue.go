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
	"time"
	"unsafe"
)

// QueueTimeoutFunc is called on the device's goroutine when a transfer has
// waited Timeout for the caller's data (TensorInput) or buffers
// (TensorOutput), and again every Timeout it keeps waiting.
type QueueTimeoutFunc func(anchor string, direction TensorType, bytesDone int64)

// QueueOptions configure a QueueManager; the zero value is the library's
// defaults, with no timeout.
type QueueOptions struct {
	RingSizeMultiplier         int64 // 0: the default (16)
	LoadSaveRingSizeMultiplier int64 // 0: the default (1)
	// RingSizeOverrides give single anchors (by name) their own multiplier
	// in place of their group's.
	RingSizeOverrides map[string]int64
	// Timeout before OnTimeout is called; nil: wait forever.
	Timeout   *time.Duration
	OnTimeout QueueTimeoutFunc
}

// config is the C config of o and what frees the memory it points to (after
// the create call).
func (o *QueueOptions) config() (C.mrt_queue_manager_config, func()) {
	var config C.mrt_queue_manager_config
	C.mrt_queue_manager_config_init_sized(&config, C.size_t(unsafe.Sizeof(config)))
	config.timeout_ns = C.GOMRT_TIMEOUT_FOREVER
	if o == nil {
		return config, func() {}
	}
	// In C memory: a Go struct passed to C may not point to Go memory.
	count := len(o.RingSizeOverrides)
	overrides := (*C.mrt_ring_size_override)(C.calloc(C.size_t(count+1), C.sizeof_mrt_ring_size_override))
	entries := unsafe.Slice(overrides, count)
	i := 0
	for name, multiplier := range o.RingSizeOverrides {
		entries[i].anchor_name, entries[i].multiplier = C.CString(name), C.int64_t(multiplier)
		i++
	}
	config.ring_size_overrides, config.num_ring_size_overrides = overrides, C.size_t(count)
	free := func() {
		for _, entry := range entries {
			C.free(unsafe.Pointer(entry.anchor_name))
		}
		C.free(unsafe.Pointer(overrides))
	}
	if o.RingSizeMultiplier != 0 {
		config.ring_size_multiplier = C.int64_t(o.RingSizeMultiplier)
	}
	if o.LoadSaveRingSizeMultiplier != 0 {
		config.load_save_ring_size_multiplier = C.int64_t(o.LoadSaveRingSizeMultiplier)
	}
	if o.Timeout != nil {
		config.timeout_ns = C.int64_t(o.Timeout.Nanoseconds())
	}
	if o.OnTimeout != nil {
		C.gomrt_queue_manager_config_set_timeout(&config, C.uintptr_t(cgo.NewHandle(o.OnTimeout)))
	}
	return config, free
}

// QueueManager holds one input queue per user input anchor of a model and
// one output queue per output anchor. Queues carry the caller's buffers to
// the device (copied into C memory by this binding at Enqueue).
type QueueManager struct {
	mu  sync.RWMutex
	ptr *C.mrt_queue_manager
}

// NewQueueManager is a manager over model's anchors connected to no device:
// the caller plays the device with Transfer.
func NewQueueManager(model *Model, options *QueueOptions) (*QueueManager, error) {
	var ptr *C.mrt_queue_manager
	err := model.use(func(mp *C.mrt_model) error {
		config, free := options.config() // its callback's handle is C's from here
		defer free()
		return call(func() C.mrt_status { return C.mrt_queue_manager_create(mp, &config, &ptr) })
	})
	return newQueueManager(ptr, err)
}

// CreateQueueManager is a manager whose queues the session's device
// transfers whenever it runs programs (replacing an earlier manager, which
// stays valid but detached). A replicated model has one per replica:
// CreateQueueManagerForReplica.
func (s *Session) CreateQueueManager(options *QueueOptions) (*QueueManager, error) {
	return s.createQueueManager(options, func(p *C.mrt_session, config *C.mrt_queue_manager_config,
		out **C.mrt_queue_manager) C.mrt_status {
		return C.mrt_session_create_queue_manager(p, config, out)
	})
}

// CreateQueueManagerForReplica is replica `replica`'s manager (0 ..
// NumReplicas()-1), fed whenever that replica runs its programs; it
// replaces that replica's earlier manager only.
func (s *Session) CreateQueueManagerForReplica(replica uint32, options *QueueOptions) (*QueueManager, error) {
	return s.createQueueManager(options, func(p *C.mrt_session, config *C.mrt_queue_manager_config,
		out **C.mrt_queue_manager) C.mrt_status {
		return C.mrt_session_create_queue_manager_for_replica(p, C.uint32_t(replica), config, out)
	})
}

func (s *Session) createQueueManager(options *QueueOptions,
	create func(*C.mrt_session, *C.mrt_queue_manager_config, **C.mrt_queue_manager) C.mrt_status) (*QueueManager, error) {
	var ptr *C.mrt_queue_manager
	err := s.do(func(p *C.mrt_session) C.mrt_status {
		config, free := options.config() // its callback's handle is C's from here
		defer free()
		return create(p, &config, &ptr)
	})
	return newQueueManager(ptr, err)
}

func newQueueManager(ptr *C.mrt_queue_manager, err error) (*QueueManager, error) {
	if err != nil {
		return nil, err
	}
	m := &QueueManager{ptr: ptr}
	runtime.SetFinalizer(m, (*QueueManager).Close)
	return m, nil
}

// Close frees the manager; no goroutine may be inside a call on it or its
// queues. Idempotent.
func (m *QueueManager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr != nil {
		C.mrt_queue_manager_destroy(m.ptr)
		m.ptr = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

func (m *QueueManager) use(f func(*C.mrt_queue_manager) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.ptr == nil {
		return closedError("QueueManager")
	}
	return f(m.ptr)
}

func (m *QueueManager) do(f func(*C.mrt_queue_manager) C.mrt_status) error {
	return m.use(func(p *C.mrt_queue_manager) error { return call(func() C.mrt_status { return f(p) }) })
}

// names lists the input (outputs false) or output queue names, sorted.
func (m *QueueManager) names(outputs bool) ([]string, error) {
	var names []string
	err := m.do(func(p *C.mrt_queue_manager) C.mrt_status {
		var count C.size_t
		var status C.mrt_status
		if outputs {
			status = C.mrt_queue_manager_num_outputs(p, &count)
		} else {
			status = C.mrt_queue_manager_num_inputs(p, &count)
		}
		for i := C.size_t(0); i < count && status == C.MRT_OK; i++ {
			var name *C.char
			if outputs {
				status = C.mrt_queue_manager_output_name(p, i, &name)
			} else {
				status = C.mrt_queue_manager_input_name(p, i, &name)
			}
			names = append(names, C.GoString(name))
		}
		return status
	})
	return names, err
}

// InputNames are the names of the input queues, sorted.
func (m *QueueManager) InputNames() ([]string, error) { return m.names(false) }

// OutputNames are the names of the output queues, sorted.
func (m *QueueManager) OutputNames() ([]string, error) { return m.names(true) }

// InputQueue is the input queue of an anchor, by name or stream handle.
func (m *QueueManager) InputQueue(name string) (*InputQueue, error) {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	var ptr *C.mrt_input_queue
	if err := m.do(func(p *C.mrt_queue_manager) C.mrt_status { return C.mrt_queue_manager_input_queue(p, cName, &ptr) }); err != nil {
		return nil, err
	}
	return &InputQueue{manager: m, ptr: ptr}, nil
}

// OutputQueue is the output queue of an anchor, by name or stream handle.
func (m *QueueManager) OutputQueue(name string) (*OutputQueue, error) {
	cName := C.CString(name)
	defer C.free(unsafe.Pointer(cName))
	var ptr *C.mrt_output_queue
	if err := m.do(func(p *C.mrt_queue_manager) C.mrt_status { return C.mrt_queue_manager_output_queue(p, cName, &ptr) }); err != nil {
		return nil, err
	}
	return &OutputQueue{manager: m, ptr: ptr}, nil
}

// FlushAll flushes every queue (a producer call on each).
func (m *QueueManager) FlushAll() error {
	return m.do(func(p *C.mrt_queue_manager) C.mrt_status { return C.mrt_queue_manager_flush_all(p) })
}

// DisconnectAll disconnects every queue; any goroutine.
func (m *QueueManager) DisconnectAll() error {
	return m.do(func(p *C.mrt_queue_manager) C.mrt_status { return C.mrt_queue_manager_disconnect_all(p) })
}

// ResetAll empties and reconnects every queue; only while no other
// goroutine uses them.
func (m *QueueManager) ResetAll() error {
	return m.do(func(p *C.mrt_queue_manager) C.mrt_status { return C.mrt_queue_manager_reset_all(p) })
}

// Transfer plays the device for one anchor (by handle or name) of a manager
// without a session: an input's next enqueued bytes are copied into
// deviceBuffer, an output's deviceBuffer into the next enqueued buffers.
// deviceBuffer is exactly the tensor's size. Blocks until enough is enqueued
// or the queue is disconnected.
func (m *QueueManager) Transfer(handle string, deviceBuffer []byte) error {
	cHandle := C.CString(handle)
	defer C.free(unsafe.Pointer(cHandle))
	buffer := cBytes(deviceBuffer)
	defer C.free(buffer)
	err := m.do(func(p *C.mrt_queue_manager) C.mrt_status { return C.mrt_queue_manager_transfer(p, cHandle, buffer) })
	copy(deviceBuffer, cSlice(buffer, uint64(len(deviceBuffer))))
	return err
}

// QueueInfo is what a queue transfers (mrt_queue_info).
type QueueInfo struct {
	Name            string
	DataType        DataType
	Shape           []int64
	SizeInBytes     int64 // one device transfer
	SampleSizeBytes int64 // the unit of enqueued sizes
	NumBuffers      int64
	Connected       bool
}

func queueInfo(get func(*C.mrt_queue_info) C.mrt_status) (QueueInfo, error) {
	var c C.mrt_queue_info
	C.mrt_queue_info_init_sized(&c, C.size_t(unsafe.Sizeof(c)))
	if err := call(func() C.mrt_status { return get(&c) }); err != nil {
		return QueueInfo{}, err
	}
	return QueueInfo{C.GoString(c.name), DataType(c.data_type), int64s(unsafe.Pointer(c.shape), int(c.rank)),
		int64(c.size_in_bytes), int64(c.sample_size_bytes), int64(c.num_buffers), bool(c.connected)}, nil
}

// queueEntry is one enqueued buffer: C memory the library reads or writes,
// the Go slice an output is copied back to, and the caller's callback.
type queueEntry struct {
	buffer unsafe.Pointer
	output []byte
	done   func()
}

// complete runs when the device has read (input) or written (output) the entry.
func (e *queueEntry) complete() {
	if e.output != nil {
		copy(e.output, cSlice(e.buffer, uint64(len(e.output))))
	}
	if e.done != nil {
		e.done()
	}
}

// release runs once when the library drops the entry.
func (e *queueEntry) release() { C.free(e.buffer) }

// InputQueue carries input buffers to the device. One producer goroutine
// at a time (Enqueue, Flush); Disconnect from any.
type InputQueue struct {
	manager *QueueManager
	ptr     *C.mrt_input_queue
}

// Enqueue queues a copy of data (a positive whole number of samples); done
// (may be nil) runs on the device's goroutine once the device has read it.
// Blocks while the queue is full; ctx ending then disconnects the queue
// (the way to wake it): the error wraps ctx.Err() and the queue needs Reset.
func (q *InputQueue) Enqueue(ctx context.Context, data []byte, done func()) error {
	return interruptible(ctx, func() { q.Disconnect() }, func() error {
		return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status {
			entry := &queueEntry{buffer: cBytes(data), done: done}
			// The library releases the entry (goQueueEntryFree), also on failure.
			return C.gomrt_input_queue_enqueue(q.ptr, entry.buffer, C.int64_t(len(data)), C.uintptr_t(cgo.NewHandle(entry)))
		})
	})
}

// Flush completes a partial transfer with zeros (or enqueues one of zeros).
func (q *InputQueue) Flush() error {
	return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status { return C.mrt_input_queue_flush(q.ptr) })
}

// Reset empties and reconnects the queue; only while no other goroutine uses it.
func (q *InputQueue) Reset() error {
	return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status { return C.mrt_input_queue_reset(q.ptr) })
}

// Disconnect wakes blocked calls; later enqueues fail with Cancelled until Reset.
func (q *InputQueue) Disconnect() error {
	return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status { return C.mrt_input_queue_disconnect(q.ptr) })
}

// Info is what the queue transfers.
func (q *InputQueue) Info() (info QueueInfo, err error) {
	err = q.manager.use(func(*C.mrt_queue_manager) error {
		info, err = queueInfo(func(c *C.mrt_queue_info) C.mrt_status { return C.mrt_input_queue_info(q.ptr, c) })
		return err
	})
	return info, err
}

// OutputQueue carries output buffers from the device, as InputQueue.
type OutputQueue struct {
	manager *QueueManager
	ptr     *C.mrt_output_queue
}

// Enqueue queues dst for the device's output; once written, the bytes are
// copied into dst and done (may be nil) runs, on the device's goroutine.
// dst must not be used until then. Blocks while the queue is full, as
// InputQueue.Enqueue.
func (q *OutputQueue) Enqueue(ctx context.Context, dst []byte, done func()) error {
	return interruptible(ctx, func() { q.Disconnect() }, func() error {
		return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status {
			entry := &queueEntry{buffer: C.malloc(C.size_t(len(dst) + 1)), output: dst, done: done}
			return C.gomrt_output_queue_enqueue(q.ptr, entry.buffer, C.int64_t(len(dst)), C.uintptr_t(cgo.NewHandle(entry)))
		})
	})
}

// Flush gives a flushed input's dummy output a scratch buffer.
func (q *OutputQueue) Flush() error {
	return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status { return C.mrt_output_queue_flush(q.ptr) })
}

// Reset empties and reconnects the queue.
func (q *OutputQueue) Reset() error {
	return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status { return C.mrt_output_queue_reset(q.ptr) })
}

// Disconnect wakes blocked calls; the device's outputs are dropped until Reset.
func (q *OutputQueue) Disconnect() error {
	return q.manager.do(func(*C.mrt_queue_manager) C.mrt_status { return C.mrt_output_queue_disconnect(q.ptr) })
}

// Info is what the queue transfers.
func (q *OutputQueue) Info() (info QueueInfo, err error) {
	err = q.manager.use(func(*C.mrt_queue_manager) error {
		info, err = queueInfo(func(c *C.mrt_queue_info) C.mrt_status { return C.mrt_output_queue_info(q.ptr, c) })
		return err
	})
	return info, err
}

package mrt

/*
#include <stdlib.h>
#include "trampolines.h"
*/
import "C"

import (
	"context"
	"runtime/cgo"
	"unsafe"
)

// QueueEntry is the locked entry of a queue's ring slot (the two-phase
// enqueue, mrt_*_queue_enqueue_lock / _complete): EnqueueLock waits for
// room and locks the slot, Complete publishes it with a buffer as Enqueue
// would. Locking again before Complete returns the same slot. While an
// entry is locked, Enqueue and Flush of its queue fail with
// FailedPrecondition. The queue's one producer goroutine uses it.
type QueueEntry struct {
	manager *QueueManager
	queue   unsafe.Pointer // the C queue
	output  bool
	entry   unsafe.Pointer // the library's entry of the slot
	slot    int64
}

// EnqueueLock locks the ring's next slot; blocks while the ring is full,
// and ctx ending then disconnects the queue, as Enqueue. Cancelled if the
// queue is or gets disconnected.
func (q *InputQueue) EnqueueLock(ctx context.Context) (*QueueEntry, error) {
	return lockEntry(ctx, q, q.manager, unsafe.Pointer(q.ptr), false)
}

// EnqueueLock is InputQueue.EnqueueLock for an output buffer.
func (q *OutputQueue) EnqueueLock(ctx context.Context) (*QueueEntry, error) {
	return lockEntry(ctx, q, q.manager, unsafe.Pointer(q.ptr), true)
}

func lockEntry(ctx context.Context, q interface{ Disconnect() error }, manager *QueueManager,
	queue unsafe.Pointer, output bool) (*QueueEntry, error) {
	e := &QueueEntry{manager: manager, queue: queue, output: output}
	var slot C.int64_t
	err := interruptible(ctx, func() { q.Disconnect() }, func() error {
		return manager.do(func(*C.mrt_queue_manager) C.mrt_status {
			return C.gomrt_queue_entry_lock(queue, C.bool(output), &e.entry, &slot)
		})
	})
	if err != nil {
		return nil, err
	}
	e.slot = int64(slot)
	return e, nil
}

// Slot is the entry's ring slot, 0 .. NumBuffers-1.
func (e *QueueEntry) Slot() int64 { return e.slot }

// Complete publishes the entry: for an input with a copy of data, for an
// output with dst (data), into which the written bytes are copied; done
// (may be nil) then runs on the device's goroutine, as with Enqueue.
// InvalidArgument for a size that is not a positive whole number of
// samples (the slot stays locked: lock it again and complete);
// FailedPrecondition if the slot is no longer locked; Cancelled if the
// queue was disconnected since the lock.
func (e *QueueEntry) Complete(data []byte, done func()) error {
	return e.manager.do(func(*C.mrt_queue_manager) C.mrt_status {
		entry := &queueEntry{done: done}
		if e.output {
			entry.buffer, entry.output = C.malloc(C.size_t(len(data)+1)), data
		} else {
			entry.buffer = cBytes(data)
		}
		handle := cgo.NewHandle(entry)
		status := C.gomrt_queue_entry_complete(e.queue, C.bool(e.output), e.entry, entry.buffer,
			C.int64_t(len(data)), C.uintptr_t(handle))
		if status != C.MRT_OK && status != C.MRT_CANCELLED { // the library took nothing
			entry.release()
			handle.Delete()
		}
		return status
	})
}

package mrt_test

// The two-phase enqueue (EnqueueLock, then Complete) on a manager without
// a session, the test playing the device: entries are the ring's slots in
// turn, bytes pass through, a relock returns the locked slot, and misuse is
// refused with its code and message, the queue still usable.

import (
	"bytes"
	"testing"

	mrt "github.com/libmrt/mrt-go"
)

func entryQueues(t *testing.T) (*mrt.QueueManager, *mrt.InputQueue, *mrt.OutputQueue) {
	t.Helper()
	manager, err := mrt.NewQueueManager(loadModel(t), &mrt.QueueOptions{RingSizeMultiplier: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { manager.Close() })
	input, err := manager.InputQueue("image")
	if err != nil {
		t.Fatal(err)
	}
	output, err := manager.OutputQueue("probs")
	if err != nil {
		t.Fatal(err)
	}
	return manager, input, output
}

func mustLock(t *testing.T, lock func() (*mrt.QueueEntry, error), slot int64) *mrt.QueueEntry {
	t.Helper()
	entry, err := lock()
	if err != nil || entry.Slot() != slot {
		t.Fatalf("lock: %v, %v; want slot %d", entry, err, slot)
	}
	return entry
}

func TestQueueEntriesAreRingSlotsAndBytesPassThrough(t *testing.T) {
	manager, input, output := entryQueues(t)
	lockIn := func() (*mrt.QueueEntry, error) { return input.EnqueueLock(testContext(t)) }
	lockOut := func() (*mrt.QueueEntry, error) { return output.EnqueueLock(testContext(t)) }
	results := [2][]byte{make([]byte, classes*4), make([]byte, classes*4)}
	var read, written int
	for slot := int64(0); slot < 2; slot++ {
		entry := mustLock(t, lockIn, slot)
		mustLock(t, lockIn, slot) // relocked
		if err := entry.Complete(mrt.NewTensor(image(float32(slot))).Data, func() { read++ }); err != nil {
			t.Fatal(err)
		}
		if err := mustLock(t, lockOut, slot).Complete(results[slot], func() { written++ }); err != nil {
			t.Fatal(err)
		}
	}
	for slot := 0; slot < 2; slot++ {
		device := make([]byte, 784*4)
		if err := manager.Transfer("image", device); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(device, mrt.NewTensor(image(float32(slot))).Data) {
			t.Fatalf("slot %d: the device read other bytes", slot)
		}
		values := bytes.Repeat([]byte{byte(slot + 1)}, classes*4)
		if err := manager.Transfer("probs", values); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(results[slot], values) {
			t.Fatalf("slot %d: output %v", slot, results[slot])
		}
	}
	if read != 2 || written != 2 {
		t.Fatalf("%d reads and %d writes completed", read, written)
	}
	mustLock(t, lockIn, 0) // the ring wraps
}

func TestQueueEntryMisuseIsRefused(t *testing.T) {
	manager, input, _ := entryQueues(t)
	lockIn := func() (*mrt.QueueEntry, error) { return input.EnqueueLock(testContext(t)) }
	entry := mustLock(t, lockIn, 0)
	err := input.Enqueue(testContext(t), make([]byte, 784*4), nil)
	wantError(t, err, mrt.FailedPrecondition, "input queue 'image': an entry is locked")
	wantError(t, entry.Complete(make([]byte, 12), nil), mrt.InvalidArgument,
		"12 bytes is not a positive multiple of the sample size")
	again := mustLock(t, lockIn, 0) // still locked
	if err := again.Complete(mrt.NewTensor(image(1)).Data, nil); err != nil {
		t.Fatal(err)
	}
	wantError(t, entry.Complete(make([]byte, 784*4), nil), mrt.FailedPrecondition, "no entry is locked")
	if err := manager.Transfer("image", make([]byte, 784*4)); err != nil {
		t.Fatal(err)
	}

	entry = mustLock(t, lockIn, 1)
	if err := input.Disconnect(); err != nil {
		t.Fatal(err)
	}
	wantError(t, entry.Complete(make([]byte, 784*4), nil), mrt.Cancelled, "input queue 'image' is disconnected")
	_, err = input.EnqueueLock(testContext(t))
	wantError(t, err, mrt.Cancelled, "mrt_input_queue_enqueue_lock: input queue 'image' is disconnected")
}

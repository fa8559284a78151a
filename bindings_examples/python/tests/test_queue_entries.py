"""The two-phase enqueue (InputQueue/OutputQueue.enqueue_lock and
enqueue_complete) on a manager without a session, the test playing the
device: entries are the ring's slots in turn, arrays and callbacks pass
through, arrays are kept alive exactly as long as needed, lock blocks while
the ring is full and raises CancelledError when disconnected, and every
misuse is refused with its status and message, leaving the queue usable."""
import gc
import threading
import unittest
import weakref

import numpy as np

import libmrt
from support import MODEL, MrtTestCase, needs_model, wait_until

RING = 2  # ring_size_multiplier 2, batch 1: two entries per ring


def image(value):
    return np.full((1, 784), value, np.float32)


@needs_model
class QueueEntryTest(MrtTestCase):
    def setUp(self):
        self.model = libmrt.Model(MODEL)
        self.manager = libmrt.QueueManager(self.model, ring_size_multiplier=RING)
        self.x = self.manager.input("image")
        self.y = self.manager.output("probs")

    def tearDown(self):
        self.manager.close()
        self.model.close()

    def transfer_image(self):
        device = np.zeros((1, 784), np.float32)
        self.manager.transfer("image", device)
        return device

    def test_entries_are_ring_slots_and_pass_arrays_and_callbacks(self):
        events = []
        inputs = [image(10 + s) for s in range(RING)]
        outputs = [np.zeros((1, 10), np.float32) for _ in range(RING)]
        for s in range(RING):
            entry = self.x.enqueue_lock()
            self.assertIsInstance(entry, libmrt.InputQueueEntry)
            self.assertEqual((entry.slot, entry.array, entry.size_bytes), (s, None, 0))
            entry.array = inputs[s]
            self.assertEqual(entry.size_bytes, 3136)
            again = self.x.enqueue_lock()  # relocked as left
            self.assertEqual(again.slot, s)
            self.assertIs(again.array, inputs[s])
            again.on_start = lambda s=s: events.append(("start", s))
            again.on_complete = lambda s=s: events.append(("read", s))
            self.assertIsNotNone(entry.on_start)
            entry.complete()

            out = self.y.enqueue_lock()
            self.assertIsInstance(out, libmrt.OutputQueueEntry)
            self.assertEqual(out.slot, s)
            out.array = outputs[s]
            out.on_complete = lambda s=s: events.append(("written", s))
            self.y.enqueue_complete()
        inputs[1][0, 5] = -1.0  # pointers, not bytes: the device reads it at transfer time
        for s in range(RING):
            np.testing.assert_array_equal(self.transfer_image(), inputs[s])
            self.manager.transfer("probs", np.full((1, 10), 100 + s, np.float32))
            np.testing.assert_array_equal(outputs[s], np.full((1, 10), 100 + s))
        self.assertEqual(events, [("start", 0), ("read", 0), ("written", 0),
                                  ("start", 1), ("read", 1), ("written", 1)])
        wrapped = self.x.enqueue_lock()  # the ring wraps: slot 0 again, empty
        self.assertEqual((wrapped.slot, wrapped.array, wrapped.size_bytes), (0, None, 0))

    def test_arrays_are_kept_alive_until_the_library_is_done(self):
        array = image(3)
        reference = weakref.ref(array)
        entry = self.x.enqueue_lock()
        entry.array = array
        entry.complete()
        del array, entry
        gc.collect()
        self.assertIsNotNone(reference())  # queued: the library holds it
        self.transfer_image()
        self.x.reset()  # drops the entry at the latest
        gc.collect()
        self.assertTrue(wait_until(lambda: reference() is None))

        # A lock a reset drops: the array goes in the reset.
        reference = self.lock_an_array(4)
        self.x.reset()
        gc.collect()
        self.assertIsNone(reference())
        self.assertEqual(self.x.enqueue_lock().slot, 0)

        # ... or when the manager closes.
        reference = self.lock_an_array(5)
        self.manager.close()
        gc.collect()
        self.assertIsNone(reference())

    def lock_an_array(self, value):
        """Locks an entry of x and sets a new array only it holds; a weak
        reference to that array."""
        array = image(value)
        self.x.enqueue_lock().array = array
        return weakref.ref(array)

    def test_lock_blocks_while_the_ring_is_full_until_freed_or_disconnected(self):
        arrays = [image(s) for s in range(RING)]
        for array in arrays:
            entry = self.x.enqueue_lock()
            entry.array = array
            entry.complete()
        results = []

        def lock():
            try:
                results.append(self.x.enqueue_lock().slot)
            except libmrt.MrtError as error:
                results.append(error)

        thread = threading.Thread(target=lock)
        thread.start()
        self.assertFalse(wait_until(lambda: results, seconds=0.05))  # blocked: no slot is free
        self.transfer_image()  # frees slot 0
        thread.join()
        self.assertEqual(results, [0])
        entry = self.x.enqueue_lock()
        entry.array = arrays[0]
        entry.complete()  # full again

        results.clear()
        thread = threading.Thread(target=lock)
        thread.start()
        self.assertFalse(wait_until(lambda: results, seconds=0.05))
        self.x.disconnect()  # wakes the blocked lock
        thread.join()
        self.assertIsInstance(results[0], libmrt.CancelledError)
        self.assertEqual(results[0].message,
                         "mrt_input_queue_enqueue_lock: input queue 'image' is disconnected")

    def test_misuse_is_refused_and_the_queue_stays_usable(self):
        no_lock = ("mrt_input_queue_enqueue_complete: input queue 'image': no entry is locked")
        self.assert_error(libmrt.FailedPreconditionError, no_lock, self.x.enqueue_complete)
        self.assert_error(libmrt.FailedPreconditionError, "output queue 'probs': no entry is locked",
                          self.y.enqueue_complete)

        entry = self.x.enqueue_lock()
        self.assert_error(libmrt.InvalidArgumentError, "expected dtype float32, got float64",
                          lambda: setattr(entry, "array", np.zeros((1, 784))))
        self.assert_error(libmrt.InvalidArgumentError, "not callable",
                          lambda: setattr(entry, "on_complete", 7))
        entry.size_bytes = 3136
        self.assert_error(libmrt.InvalidArgumentError,
                          "input queue 'image': data must not be NULL", self.x.enqueue_complete)
        array = image(7)
        entry.array = array
        self.assert_error(libmrt.InvalidArgumentError,
                          "size_bytes 4000: the entry's array holds 3136 bytes",
                          lambda: setattr(entry, "size_bytes", 4000))
        entry.size_bytes = 12
        error = self.assert_error(
            libmrt.InvalidArgumentError,
            "input queue 'image': 12 bytes is not a positive multiple of the sample size",
            entry.complete)
        self.assertEqual(error.code, libmrt.Status.INVALID_ARGUMENT)
        self.assertIs(self.x.enqueue_lock().array, array)  # still locked, as left

        # enqueue and flush would publish the entry being filled.
        locked = "input queue 'image': an entry is locked (mrt_input_queue_enqueue_lock)"
        self.assert_error(libmrt.FailedPreconditionError, locked,
                          lambda: self.x.enqueue(image(1)))
        self.assert_error(libmrt.FailedPreconditionError, locked, self.x.flush)
        self.assert_error(libmrt.FailedPreconditionError, locked, self.manager.flush_all)

        entry.size_bytes = 3136
        entry.complete()
        self.assert_error(libmrt.FailedPreconditionError, "no longer locked",
                          lambda: entry.array)
        self.assert_error(libmrt.FailedPreconditionError, no_lock, self.x.enqueue_complete)
        np.testing.assert_array_equal(self.transfer_image(), array)

        out = self.y.enqueue_lock()
        read_only = np.zeros((1, 10), np.float32)
        read_only.flags.writeable = False
        self.assert_error(libmrt.InvalidArgumentError, "read-only",
                          lambda: setattr(out, "array", read_only))

        # A disconnect: complete is cancelled, the array let go.
        entry = self.x.enqueue_lock()
        entry.array = image(8)
        reference = weakref.ref(entry.array)
        self.manager.disconnect_all()
        self.assert_error(libmrt.CancelledError, "input queue 'image' is disconnected",
                          entry.complete)
        gc.collect()
        self.assertIsNone(reference())

        # Reset: usable again, from slot 0.
        self.manager.reset_all()
        entry = self.x.enqueue_lock()
        self.assertEqual(entry.slot, 0)
        entry.array = image(9)
        entry.complete()
        np.testing.assert_array_equal(self.transfer_image(), image(9))

    def test_entries_of_a_closed_manager(self):
        entry = self.x.enqueue_lock()
        self.manager.close()
        self.assert_error(libmrt.FailedPreconditionError, "QueueManager is closed",
                          lambda: entry.array)
        self.assert_error(libmrt.FailedPreconditionError, "QueueManager is closed",
                          self.x.enqueue_lock)


if __name__ == "__main__":
    unittest.main()

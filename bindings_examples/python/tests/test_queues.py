"""QueueManager: arrays queued without copies, moved by a session or by
transfer(); checks, callbacks and their exceptions, disconnect/reset."""
import gc
import threading
import unittest
import weakref

import numpy as np

import libmrt
from support import (MODEL, MrtTestCase, deterministic_image, needs_model,
                     reference_probs, wait_until)


@needs_model
class StandaloneQueueTest(MrtTestCase):
    """A manager without a session: the test plays the device."""

    def setUp(self):
        self.model = libmrt.Model(MODEL)
        self.manager = libmrt.QueueManager(self.model, ring_size_multiplier=2)

    def tearDown(self):
        self.manager.close()
        self.model.close()

    def test_names_info_and_a_round_trip(self):
        self.assertEqual(self.manager.input_names(), ["image"])
        self.assertEqual(self.manager.output_names(), ["probs"])
        queue = self.manager.input("image")
        info = queue.info()
        self.assertEqual((info.name, info.dtype, info.shape, info.size_in_bytes,
                          info.sample_size_bytes, info.num_buffers, info.connected),
                         ("image", np.dtype(np.float32), (1, 784), 3136, 3136, 2, True))
        events = []
        image = deterministic_image()
        queue.enqueue(image, on_start=lambda: events.append("start"),
                      on_complete=lambda: events.append("complete"))
        device = np.zeros((1, 784), np.float32)
        self.manager.transfer("image", device)
        np.testing.assert_array_equal(device, image)
        self.assertEqual(events, ["start", "complete"])

        probs = np.zeros((1, 10), np.float32)
        written = threading.Event()
        self.manager.output("probs").enqueue(probs, on_complete=written.set)
        self.manager.transfer("probs", np.arange(10, dtype=np.float32).reshape(1, 10))
        self.assertTrue(written.is_set())
        np.testing.assert_array_equal(probs.ravel(), np.arange(10))

    def test_ring_size_overrides_size_single_rings(self):
        # image and probs are both Main anchors: probs gets its own multiplier.
        with libmrt.QueueManager(self.model, ring_size_multiplier=2,
                                 ring_size_overrides={"probs": 5}) as manager:
            self.assertEqual(manager.input("image").info().num_buffers, 2)  # batch 1
            self.assertEqual(manager.output("probs").info().num_buffers, 5)
        self.assert_error(libmrt.NotFoundError, "the model has no anchor named 'nope'",
                          lambda: libmrt.QueueManager(self.model, ring_size_overrides={"nope": 2}))
        self.assert_error(libmrt.InvalidArgumentError, "('probs'): the multiplier must be at least 1",
                          lambda: libmrt.QueueManager(self.model, ring_size_overrides={"probs": 0}))
        self.assert_error(libmrt.InvalidArgumentError, "expected a dict of anchor name",
                          lambda: libmrt.QueueManager(self.model, ring_size_overrides=[("probs", 2)]))

    def test_arrays_are_checked_and_kept_alive(self):
        queue = self.manager.input("image")
        self.assert_error(libmrt.InvalidArgumentError, "expected dtype float32, got float64",
                          lambda: queue.enqueue(np.zeros((1, 784))))
        self.assert_error(libmrt.InvalidArgumentError, "expected shape ('N', 784) float32",
                          lambda: queue.enqueue(np.zeros((1, 783), np.float32)))
        self.assert_error(libmrt.InvalidArgumentError, "read-only",
                          lambda: self.manager.output("probs").enqueue(_read_only((1, 10))))
        self.assert_error(libmrt.InvalidArgumentError, "not callable",
                          lambda: queue.enqueue(deterministic_image(), on_complete=7))
        self.assert_error(libmrt.NotFoundError, "", lambda: self.manager.input("nope"))
        self.assert_error(libmrt.InvalidArgumentError, "one transfer of 3136 bytes",
                          lambda: self.manager.transfer("image", np.zeros(3, np.float32)))
        image = deterministic_image()
        reference = weakref.ref(image)
        queue.enqueue(image)
        del image
        gc.collect()
        self.assertIsNotNone(reference())  # queued: the library holds it
        self.manager.transfer("image", np.zeros((1, 784), np.float32))
        queue.reset()  # drops the entry at the latest
        gc.collect()
        self.assertTrue(wait_until(lambda: reference() is None))

    def test_disconnect_flush_and_reset(self):
        queue = self.manager.input("image")
        queue.flush()  # a whole transfer of zeros
        device = np.ones((1, 784), np.float32)
        self.manager.transfer("image", device)
        self.assertFalse(device.any())
        queue.disconnect()
        self.assertFalse(queue.info().connected)
        self.assert_error(libmrt.CancelledError, "", lambda: queue.enqueue(deterministic_image()))
        queue.reset()
        self.assertTrue(queue.info().connected)
        self.manager.disconnect_all()
        self.manager.reset_all()
        self.manager.output("probs").flush()
        self.manager.flush_all()
        self.manager.output("probs").disconnect()
        self.manager.output("probs").reset()

    def test_a_blocked_transfer_calls_the_timeout_callback(self):
        calls = []
        with libmrt.QueueManager(self.model, timeout=0.01,
                                 on_timeout=lambda *args: calls.append(args)) as manager:
            queue = manager.input("image")

            def feed_later():
                wait_until(lambda: calls)
                queue.enqueue(deterministic_image())

            threading.Thread(target=feed_later).start()
            manager.transfer("image", np.zeros((1, 784), np.float32))
        self.assertEqual(calls[0], ("image", libmrt.TensorType.INPUT, 0))

    def test_exceptions_in_callbacks_are_raised_by_transfer(self):
        queue = self.manager.input("image")
        queue.enqueue(deterministic_image(), on_complete=lambda: 1 / 0)
        with self.assertRaises(ZeroDivisionError):
            self.manager.transfer("image", np.zeros((1, 784), np.float32))
        queue.enqueue(deterministic_image())
        self.manager.transfer("image", np.zeros((1, 784), np.float32))  # usable after

    def test_queues_of_a_closed_manager(self):
        queue = self.manager.input("image")
        self.manager.close()
        self.assert_error(libmrt.FailedPreconditionError, "QueueManager is closed", queue.info)


def _read_only(shape):
    array = np.zeros(shape, np.float32)
    array.flags.writeable = False
    return array


@needs_model
class SessionQueueTest(MrtTestCase):
    def test_a_session_moves_queued_arrays_while_a_producer_thread_enqueues(self):
        with libmrt.Model(MODEL) as model, libmrt.DeviceManager() as devices, \
                libmrt.Session(model) as session:
            with devices.get_device_for_model(model) as device:
                session.bind(device)
            images = [np.random.default_rng(i).random((1, 784), dtype=np.float32) for i in range(4)]
            results = [np.zeros((1, 10), np.float32) for _ in images]
            with session.create_queue_manager(ring_size_multiplier=2) as manager:
                def produce():
                    for image, probs in zip(images, results):
                        manager.input("image").enqueue(image)
                        manager.output("probs").enqueue(probs)

                producer = threading.Thread(target=produce)
                producer.start()
                for _ in images:
                    session.run_main()
                producer.join()
            for image, probs in zip(images, results):
                np.testing.assert_allclose(probs, reference_probs(model, image), rtol=1e-5,
                                           atol=1e-7)

    def test_destroying_the_session_detaches_its_manager(self):
        with libmrt.Model(MODEL) as model:
            session = libmrt.Session(model)
            manager = session.create_queue_manager()
            queue = manager.input("image")
            session.close()
            self.assert_error(libmrt.FailedPreconditionError, "its session was destroyed",
                              queue.flush)
            self.assertEqual(manager.input_names(), ["image"])
            manager.close()


if __name__ == "__main__":
    unittest.main()

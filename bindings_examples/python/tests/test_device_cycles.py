"""Session.device_time / device_cycles: each replica's modelled device cycles of a
session driven by hand (as mrt-bench reads them), and its bad arguments."""
import unittest

import numpy as np

import libmrt
from support import (MODEL, REPLICATED_MODEL, MrtTestCase, deterministic_image, needs_model,
                     needs_replicated_model)

N = 16  # the replicated model: add_one, x and y float32 [1, 16]


def run_one_request(session, replica):
    """One add_one request through replica `replica`'s own queues."""
    with session.create_queue_manager(replica) as queues:
        x = (100 * replica + np.arange(N, dtype=np.float32)).reshape(1, N)
        y = np.zeros((1, N), np.float32)
        queues.input("x").enqueue(x)
        queues.output("y").enqueue(y)
        session.run_main(replica)
    np.testing.assert_array_equal(y, x + 1)


class DeviceCyclesTest(MrtTestCase):
    @classmethod
    def setUpClass(cls):
        cls.devices = libmrt.DeviceManager()

    @classmethod
    def tearDownClass(cls):
        cls.devices.close()

    def bound_session(self, path):
        model = libmrt.Model(path)
        session = libmrt.Session(model)
        with self.devices.get_device_for_model(model) as device:
            session.bind(device)
        model.close()
        return session

    def cycles_of(self, session, replica):
        reading = session.device_time(replica)
        self.assertGreater(reading.clock_hz, 1e8)
        self.assertEqual(session.device_cycles(replica), reading.cycles)
        return reading.cycles

    @needs_replicated_model
    def test_each_replica_counts_its_own_runs(self):
        with self.bound_session(REPLICATED_MODEL) as session:
            run_one_request(session, 0)
            after_first = [self.cycles_of(session, r) for r in (0, 1)]
            self.assertGreater(after_first[0], 0)
            run_one_request(session, 1)
            self.assertEqual(self.cycles_of(session, 0), after_first[0])
            self.assertGreater(self.cycles_of(session, 1), after_first[1])

    @needs_model
    def test_a_model_that_is_not_replicated_has_replica_0(self):
        with self.bound_session(MODEL) as session:
            reading = session.device_time()
            self.assertIsInstance(reading, libmrt.DeviceTime)
            self.assertEqual(reading.cycles, 0)  # nothing has run since the load
            image = deterministic_image()
            session.set_callback("image", lambda array: array.__setitem__(..., image))
            session.set_callback("probs", None)
            session.run_main()
            after = session.device_time(0)
            self.assertGreater((after - reading).cycles, 0)
            self.assertEqual(after.clock_hz, reading.clock_hz)

    @needs_replicated_model
    def test_bad_arguments(self):
        session = self.bound_session(REPLICATED_MODEL)
        error = self.assert_error(
            libmrt.InvalidArgumentError,
            "mrt_session_device_cycles: replica 2 out of range: the session's model",
            lambda: session.device_cycles(2))
        self.assertIn("has 2 replicas", error.message)
        self.assertEqual(error.code, libmrt.Status.INVALID_ARGUMENT)
        session.device_cycles(1)  # still usable
        run_one_request(session, 1)
        session.close()
        self.assert_error(libmrt.FailedPreconditionError, "Session is closed",
                          lambda: session.device_cycles(0))


if __name__ == "__main__":
    unittest.main()

"""ModelRunner.device_time / device_cycles (mrt_model_runner_device_cycles)
and the library's view of a Future (mrt_future_is_ready, mrt_future_status),
as tests/c/test_runner.c uses them: modelled cycles that grow by one Main
run per request, per replica of a replicated model, the target's clock;
futures done, failed and still pending; refusals with status and message."""
import unittest

import numpy as np

import libmrt
from support import (MODEL, REPLICATED_MODEL, MrtTestCase, deterministic_image, needs_model,
                     needs_replicated_model, reference_probs, wait_until)


@needs_model
class DeviceTimeTest(MrtTestCase):
    def test_device_cycles_grow_by_one_main_run_per_request(self):
        image = deterministic_image()
        with libmrt.Model(MODEL) as model, libmrt.ModelRunner(model) as runner:
            # The runner's device thread runs Load after the runner is made:
            # a first request makes sure the count includes it.
            probs = runner.execute({"image": image})["probs"]
            np.testing.assert_allclose(probs, reference_probs(model, image), rtol=1e-5, atol=1e-7)
            loaded = runner.device_time()
            self.assertGreater(loaded.cycles, 0)
            runner.execute({"image": image})
            one = runner.device_cycles() - loaded.cycles
            self.assertGreater(one, 0)
            for _ in range(3):
                runner.execute({"image": image})
            served = runner.device_time() - loaded
            self.assertEqual(served.cycles, 4 * one)
            with model.executable() as executable:
                clock_hz = executable.target().clock_hz
            self.assertGreater(clock_hz, 0)
            self.assertEqual(served.clock_hz, clock_hz)
            self.assertEqual(served.seconds, 4 * one / clock_hz)
            self.assertEqual(runner.device_time(0), runner.device_time())
            error = self.assert_error(libmrt.InvalidArgumentError,
                                      "replica_id 1 out of range: the runner has 1 replica",
                                      lambda: runner.device_time(1))
            self.assertEqual(error.status, libmrt.Status.INVALID_ARGUMENT)
            self.assert_error(libmrt.InvalidArgumentError, "replica_id 1 out of range",
                              lambda: runner.device_cycles(1))
        self.assert_error(libmrt.FailedPreconditionError, "closed", runner.device_time)

    @needs_replicated_model
    def test_each_replica_counts_the_cycles_of_its_own_lane(self):
        x = np.zeros((1, 16), np.float32)
        with libmrt.ModelRunner(REPLICATED_MODEL) as runner:
            self.assertEqual(runner.num_replicas, 2)
            runner.execute({"x": x}, replica=0)  # Load done, whatever the model's
            before0, before1 = runner.device_cycles(0), runner.device_cycles(1)
            y = runner.execute({"x": x}, replica=1)["y"]
            np.testing.assert_array_equal(y, x + 1)
            after1 = runner.device_cycles(1)
            self.assertGreater(after1, before1)
            self.assertEqual(runner.device_cycles(0), before0)  # replica 0 has not run
            y = runner.execute({"x": x}, replica=0)["y"]
            np.testing.assert_array_equal(y, x + 1)
            self.assertGreater(runner.device_cycles(0), before0)
            self.assertEqual(runner.device_cycles(1), after1)
            self.assert_error(libmrt.InvalidArgumentError,
                              "replica_id 2 out of range: the runner has 2 replicas",
                              lambda: runner.device_time(2))


@needs_model
class FutureStatusTest(MrtTestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = libmrt.Model(MODEL)
        cls.image = deterministic_image()

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def test_done_requests_are_ready_with_their_status(self):
        with libmrt.ModelRunner(self.model) as runner:
            futures = [runner.execute_async({"image": self.image}) for _ in range(4)]
            for future in futures:
                probs = future.result(timeout=30)["probs"]
                np.testing.assert_allclose(probs, reference_probs(self.model, self.image),
                                           rtol=1e-5, atol=1e-7)
                self.assertTrue(future.is_ready())
                self.assertEqual(future.status(), libmrt.Status.OK)
                future.close()
                # Without its handle: what the Future was completed with.
                self.assertTrue(future.is_ready())
                self.assertEqual(future.status(), libmrt.Status.OK)

    def test_a_failed_request_has_the_status_of_its_failure(self):
        with libmrt.ModelRunner(self.model) as runner:
            runner.insert_simulated_error("relu")
            # The fault hits the replica's next Main run, which may be the
            # one after the run already waiting for input.
            statuses = []
            for _ in range(3):
                with runner.execute_async({"image": self.image}) as future:
                    self.assertTrue(future.wait(30))
                    self.assertTrue(future.is_ready())
                    statuses.append(future.status())
                    if statuses[-1] != libmrt.Status.OK:
                        error = self.assert_error(libmrt.DeviceError, "TILE_EXCEPTION",
                                                  future.result)
                        self.assertEqual(error.code, statuses[-1])
                        break
            self.assertEqual(statuses[-1], libmrt.Status.DEVICE_ERROR, statuses)

    def test_a_pending_request_is_not_ready_and_has_no_status_yet(self):
        # Only probs padded when the runner times out: the device, waiting
        # for image, never runs on padding, so a request's own output entry
        # sits behind the padded one and the request stays pending until
        # the runner goes (test_runner.py's flush_select test).
        asked = []

        def select(tensor_id, selection):
            selection.add_output("probs")
            asked.append(tensor_id)
        runner = libmrt.ModelRunner(self.model, timeout=0.002, ring_buffer_size_multiplier=1,
                                    flush_select_callback=select)
        self.assertTrue(wait_until(lambda: asked, 10))
        pending = runner.execute_async({"image": self.image})
        self.assertFalse(pending.wait(0.2))
        self.assertFalse(pending.is_ready())
        error = self.assert_error(libmrt.FailedPreconditionError,
                                  "the request is still running: its status is not known yet",
                                  pending.status)
        self.assertEqual(error.status, libmrt.Status.FAILED_PRECONDITION)
        runner.close()
        self.assertTrue(pending.wait(0))
        self.assertTrue(pending.is_ready())
        self.assertEqual(pending.status(), libmrt.Status.CANCELLED)
        self.assert_error(libmrt.CancelledError, "", pending.result)
        pending.close()


if __name__ == "__main__":
    unittest.main()

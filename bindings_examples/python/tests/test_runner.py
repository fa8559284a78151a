"""ModelRunner: results against the numpy reference, futures (threads and
asyncio), statistics, and misuse - wrong names, dtypes, shapes, layouts,
use after close, callbacks that raise - giving MrtError, never a crash."""
import asyncio
import concurrent.futures
import gc
import subprocess
import sys
import threading
import unittest
import weakref

import numpy as np

import libmrt
from support import (MODEL, CallbackErrors, MrtTestCase, deterministic_image, needs_model,
                     reference_probs, wait_until)


@needs_model
class RunnerTest(MrtTestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = libmrt.Model(MODEL)
        cls.runner = libmrt.ModelRunner(cls.model)
        cls.image = deterministic_image()
        cls.expected = reference_probs(cls.model, cls.image)

    @classmethod
    def tearDownClass(cls):
        cls.runner.close()
        cls.model.close()

    def assert_matches_reference(self, probs, image=None):
        expected = self.expected if image is None else reference_probs(self.model, image)
        self.assertEqual(int(np.argmax(probs)), int(np.argmax(expected)))
        np.testing.assert_allclose(probs.ravel(), expected.ravel(), rtol=1e-5, atol=1e-7)

    # -- results ------------------------------------------------------------

    def test_descriptions(self):
        self.assertEqual(list(self.runner.execute_inputs), ["image"])
        desc = self.runner.execute_inputs["image"]
        self.assertEqual((desc.shape, desc.size_in_bytes, desc.dtype), ((1, 784), 3136, np.float32))
        self.assertEqual(self.runner.execute_outputs["probs"].shape, (1, 10))
        self.assertTrue(self.runner.model_inputs["w1"].popef_contains_tensor_data)
        self.assertEqual(self.model.info().executable, "mlp")
        self.assertEqual(self.model.anchor("w1").shape, (784, 128))

    def test_outputs_are_written_into_the_callers_array(self):
        probs = np.full((1, 10), -1.0, np.float32)
        returned = self.runner.execute({"image": self.image}, {"probs": probs})
        self.assertIs(returned["probs"], probs)
        self.assert_matches_reference(probs)

    def test_many_images_sync_async_and_library_allocated(self):
        rng = np.random.default_rng(5)
        for _ in range(5):
            image = rng.random((1, 784), dtype=np.float32)
            self.assert_matches_reference(self.runner.execute({"image": image})["probs"], image)
            with self.runner.execute_async({"image": image}) as future:
                self.assert_matches_reference(future.result(timeout=30)["probs"], image)
                self.assertTrue(future.done())
                self.assertEqual(future.status(), libmrt.Status.OK)
                self.assertIsNone(future.exception())
            with self.runner.execute_alloc({"image": image}) as memory:
                self.assertEqual(memory.names(), ["probs"])
                self.assert_matches_reference(memory["probs"], image)

    def test_tensor_data_is_a_read_only_view_that_outlives_close(self):
        model = libmrt.Model(MODEL)
        b2 = model.tensor_data("b2")
        copy = b2.copy()
        self.assertFalse(b2.flags.writeable)
        with self.assertRaises(ValueError):
            b2[0] = 1.0
        model.close()
        self.assertTrue(model.closed)
        gc.collect()
        np.testing.assert_array_equal(b2, copy)  # the view holds the model's memory

    def test_tensor_memory_view_outlives_close(self):
        memory = self.runner.execute_alloc({"image": self.image})
        probs = memory["probs"]
        memory.close()
        gc.collect()
        self.assert_matches_reference(probs)
        self.assert_error(libmrt.FailedPreconditionError, "TensorMemory is closed",
                          lambda: memory["probs"])

    # -- misuse -------------------------------------------------------------

    def test_unknown_input_name_carries_the_library_message(self):
        error = self.assert_error(
            libmrt.NotFoundError, "unknown input 'imagee'",
            lambda: self.runner.execute({"image": self.image, "imagee": self.image}))
        self.assertIn("mrt_model_runner_execute", error.message)
        self.assert_error(libmrt.NotFoundError, "unknown input 'imagee': execute inputs are image (missing: image)",
                          lambda: self.runner.execute({"imagee": self.image}))

    def test_unknown_names_elsewhere(self):
        self.assert_error(libmrt.NotFoundError, "no TensorData named 'w3'",
                          lambda: self.model.tensor_data("w3"))
        memory = self.runner.execute_alloc({"image": self.image})
        self.assert_error(libmrt.NotFoundError, "'nope'", lambda: memory["nope"])
        memory.close()
        self.assert_error(libmrt.NotFoundError, "no such PopEF file",
                          lambda: libmrt.Model(MODEL + ".missing"))
        self.assert_error(libmrt.InvalidArgumentError, "unknown option(s) replicas",
                          lambda: libmrt.ModelRunner(self.model, replicas=2))

    def test_wrong_size_dtype_and_layout_are_refused_before_c(self):
        probs = np.empty((1, 10), np.float32)
        self.assert_error(libmrt.InvalidArgumentError,
                          "input 'image': expected shape (1, 784) float32, got shape (1, 783)",
                          lambda: self.runner.execute({"image": self.image[:, :783].copy()}))
        self.assert_error(libmrt.InvalidArgumentError,
                          "input 'image': expected shape (1, 784) float32, got shape (784,)",
                          lambda: self.runner.execute({"image": self.image.reshape(784)}))
        self.assert_error(libmrt.InvalidArgumentError,
                          "expected shape (1, 784) float32, got shape (2, 392)",
                          lambda: self.runner.execute({"image": self.image.reshape(2, 392)}))
        self.assert_error(libmrt.InvalidArgumentError, "output 'probs': expected shape (1, 10)",
                          lambda: self.runner.execute({"image": self.image},
                                                      {"probs": np.empty((1, 11), np.float32)}))
        self.assert_error(libmrt.InvalidArgumentError, "expected dtype float32, got float64",
                          lambda: self.runner.execute({"image": self.image.astype(np.float64)}))
        self.assert_error(libmrt.InvalidArgumentError, "expected dtype float32, got int32",
                          lambda: self.runner.execute({"image": self.image},
                                                      {"probs": np.empty((1, 10), np.int32)}))
        strided = np.zeros((1, 1568), np.float32)[:, ::2]  # right size, not contiguous
        self.assert_error(libmrt.InvalidArgumentError, "C-contiguous",
                          lambda: self.runner.execute({"image": strided}))
        read_only = np.empty((1, 10), np.float32)
        read_only.flags.writeable = False
        self.assert_error(libmrt.InvalidArgumentError, "read-only",
                          lambda: self.runner.execute({"image": self.image}, {"probs": read_only}))
        self.assert_error(libmrt.InvalidArgumentError, "expected a numpy array, got list",
                          lambda: self.runner.execute({"image": [0.0] * 784}))
        self.assert_error(libmrt.InvalidArgumentError, "expected a dict",
                          lambda: self.runner.execute([self.image]))
        self.assert_error(libmrt.InvalidArgumentError, "expected shape (1, 784)",
                          lambda: self.runner.execute_async({"image": self.image[:, :10].copy()}))
        self.assert_error(libmrt.InvalidArgumentError, "replica_id 1 out of range",
                          lambda: self.runner.execute({"image": self.image}, {"probs": probs}, 1))
        # Still serving.
        self.runner.execute({"image": self.image}, {"probs": probs})
        self.assert_matches_reference(probs)

    def test_use_after_close_raises(self):
        model = libmrt.Model(MODEL)
        with libmrt.ModelRunner(model) as runner:
            future = runner.execute_async({"image": self.image})
            future.result()
            memory = runner.execute_alloc({"image": self.image})
        self.assertTrue(runner.closed)
        model.close()
        future.close()
        memory.close()
        future.close()  # closing twice is harmless
        runner.close()
        for action, kind in [
                (lambda: runner.execute({"image": self.image}), "ModelRunner"),
                (lambda: runner.execute_async({"image": self.image}), "ModelRunner"),
                (lambda: runner.execute_alloc({"image": self.image}), "ModelRunner"),
                (lambda: model.tensor_data("w1"), "Model"),
                (lambda: model.info(), "Model"),
                (lambda: len(memory), "TensorMemory")]:
            self.assert_error(libmrt.FailedPreconditionError, f"{kind} is closed", action)

    def test_runner_from_a_path_and_pending_requests_at_close(self):
        runner = libmrt.ModelRunner(MODEL)
        futures = [runner.execute_async({"image": self.image}) for _ in range(4)]
        runner.close()  # pending requests complete, with CANCELLED if not run
        for future in futures:
            self.assertTrue(future.wait(timeout=30))
            self.assertIn(future.status(), (libmrt.Status.OK, libmrt.Status.CANCELLED))
            if future.status() == libmrt.Status.OK:
                self.assert_matches_reference(future.result()["probs"])
            else:
                self.assert_error(libmrt.CancelledError, "", future.result)
                self.assertIsInstance(future.exception(), libmrt.CancelledError)
            future.close()

    def test_failed_request_raises_from_result(self):
        with libmrt.ModelRunner(self.model) as runner:
            self.assert_error(libmrt.NotFoundError, "no program step named 'nope'",
                              lambda: runner.insert_simulated_error("nope"))
            runner.insert_simulated_error("relu")
            # The fault hits the replica's next Main run, which may be the
            # one after the run already waiting for input.
            failed = False
            for _ in range(3):
                with runner.execute_async({"image": self.image}) as future:
                    future.wait(timeout=30)
                    if future.status() == libmrt.Status.OK:
                        self.assert_matches_reference(future.result()["probs"])
                        continue
                    error = self.assert_error(libmrt.DeviceError, "TILE_EXCEPTION", future.result)
                    self.assertEqual(error.recovery_action, libmrt.RecoveryAction.IPU_RESET)
                    self.assertEqual(future.recovery_action(), libmrt.RecoveryAction.IPU_RESET)
                    failed = True
                    break
            self.assertTrue(failed)
            # Without auto_reset the replica is out of service.
            error = self.assert_error(libmrt.DeviceError, "out of service",
                                      lambda: runner.execute({"image": self.image}))
            self.assertEqual(error.recovery_action, libmrt.RecoveryAction.IPU_RESET)
            self.assertEqual(libmrt.last_error_recovery_action(), libmrt.RecoveryAction.IPU_RESET)

    # -- callbacks ----------------------------------------------------------

    def test_done_callbacks_run_once_and_are_released(self):
        calls = []
        done = threading.Event()

        def on_done(future):
            calls.append(future.status())
            done.set()

        reference = weakref.ref(on_done)
        with self.runner.execute_async({"image": self.image}) as future:
            future.add_done_callback(on_done)
            self.assertTrue(done.wait(30))
            future.result()
            future.add_done_callback(on_done)  # already done: runs at once, here
        self.assertEqual(calls, [libmrt.Status.OK, libmrt.Status.OK])
        del on_done
        gc.collect()
        self.assertTrue(wait_until(lambda: reference() is None),
                        "the library did not release the callback")

    def test_a_done_callback_may_close_its_runner(self):
        # The callback runs on the runner's device thread, which destroying
        # the runner joins: the binding must not destroy it there.
        runner = libmrt.ModelRunner(self.model)
        closed = threading.Event()

        def close_runner(future):
            runner.close()
            closed.set()

        with runner.execute_async({"image": self.image}) as future:
            future.add_done_callback(close_runner)
            self.assert_matches_reference(future.result(timeout=30)["probs"])
        self.assertTrue(closed.wait(30))
        self.assertTrue(runner.closed)
        self.assert_error(libmrt.FailedPreconditionError, "ModelRunner is closed",
                          lambda: runner.execute({"image": self.image}))

    def test_raising_done_callback_is_reported_not_fatal(self):
        with CallbackErrors() as collected:
            with self.runner.execute_async({"image": self.image}) as future:
                future.add_done_callback(lambda future: 1 / 0)
                self.assert_matches_reference(future.result()["probs"])
                future.add_done_callback(lambda future: [][1])
            self.assertTrue(wait_until(lambda: len(collected.errors) == 2))
        kinds = sorted(type(e).__name__ for _, e in collected.errors)
        self.assertEqual(kinds, ["IndexError", "ZeroDivisionError"])
        self.assertIn("Future done callback", collected.errors[0][0])
        # The runner serves on.
        self.assert_matches_reference(self.runner.execute({"image": self.image})["probs"])

    def test_buffers_live_until_the_request_is_done_even_if_the_future_is_closed(self):
        probs = np.empty((1, 10), np.float32)
        image = self.image.copy()
        image_ref, probs_ref = weakref.ref(image), weakref.ref(probs)
        self.runner.execute_async({"image": image}, {"probs": probs}).close()
        del image, probs
        # Held by the library's on_ready registration until the request ends,
        # then released by its user_data_free.
        self.assertTrue(wait_until(lambda: gc.collect() is not None and image_ref() is None
                                   and probs_ref() is None))

    def test_log_callback_receives_messages_and_survives_exceptions(self):
        messages = []
        released = threading.Event()

        class Sink:
            def __call__(self, level, message):
                if "raise please" in message:
                    raise RuntimeError("callback failure")
                messages.append((level, message))

            def __del__(self):
                released.set()

        saved_level = libmrt.get_log_level()
        libmrt.set_log_level(libmrt.LogLevel.INFO)
        try:
            with CallbackErrors() as collected:
                libmrt.set_log_callback(Sink())
                libmrt.log_message(libmrt.LogLevel.WARN, "from python")
                libmrt.log_message(libmrt.LogLevel.WARN, "raise please")
                libmrt.log_message(libmrt.LogLevel.INFO, "after the exception")
                libmrt.set_log_callback(None)
            self.assertEqual(len(collected.errors), 1)
            self.assertIn("log callback", collected.errors[0][0])
            self.assertIsInstance(collected.errors[0][1], RuntimeError)
            collected.errors.clear()  # its traceback refers to the Sink
            gc.collect()
            self.assertTrue(released.wait(10), "the library did not release the log callback")
        finally:
            libmrt.set_log_level(saved_level)
        texts = [m for _, m in messages]
        self.assertTrue(any("from python" in t for t in texts), texts)
        self.assertTrue(any("after the exception" in t for t in texts), texts)
        self.assertEqual([level for level, m in messages if "from python" in m], [libmrt.LogLevel.WARN])
        self.assert_error(libmrt.InvalidArgumentError, "not callable",
                          lambda: libmrt.set_log_callback(42))
        self.assert_error(libmrt.InvalidArgumentError, "", lambda: libmrt.set_log_level(17))


    def test_interpreter_exit_with_everything_open(self):
        # Runners with requests in flight, done callbacks and a log callback
        # still registered at exit: the binding takes them back before the
        # interpreter finalizes, so no library thread calls into a dead one.
        script = (
            "import numpy as np, libmrt\n"
            "libmrt.set_log_level(libmrt.LogLevel.DEBUG)\n"
            "libmrt.set_log_callback(lambda level, message: None)\n"
            f"runner = libmrt.ModelRunner({MODEL!r})\n"
            "image = np.zeros((1, 784), np.float32)\n"
            "futures = [runner.execute_async({'image': image}) for _ in range(8)]\n"
            "for future in futures: future.add_done_callback(lambda future: None)\n"
            f"weights = libmrt.Model({MODEL!r}).tensor_data('w1')\n")
        completed = subprocess.run([sys.executable, "-B", "-c", script],
                                   capture_output=True, text=True, timeout=60)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNotIn("Traceback", completed.stderr)


@needs_model
class RunnerFeaturesTest(MrtTestCase):
    """Futures as concurrent.futures and asyncio, statistics, config, and the
    options that take arrays, devices and callbacks."""

    @classmethod
    def setUpClass(cls):
        cls.model = libmrt.Model(MODEL)
        cls.image = deterministic_image()
        cls.expected = reference_probs(cls.model, cls.image)

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def assert_matches(self, probs, expected=None):
        np.testing.assert_allclose(probs, self.expected if expected is None else expected,
                                   rtol=1e-5, atol=1e-7)

    def test_futures_work_with_concurrent_futures_and_asyncio(self):
        with libmrt.ModelRunner(self.model, thread_safe=True) as runner:
            futures = [runner.execute_async({"image": self.image}) for _ in range(4)]
            self.assertIsInstance(futures[0], concurrent.futures.Future)
            for future in concurrent.futures.as_completed(futures, timeout=30):
                self.assert_matches(future.result()["probs"])
            self.assertFalse(futures[0].cancel())  # requests cannot be cancelled

            async def serve():
                results = await asyncio.gather(*(runner.execute_async({"image": self.image})
                                                 for _ in range(3)))
                memory = await runner.execute_async_alloc({"image": self.image})
                return results, memory

            results, memory = asyncio.run(serve())
            for outputs in results:
                self.assert_matches(outputs["probs"])
            self.assertIsInstance(memory, libmrt.TensorMemory)
            self.assert_matches(memory["probs"])
            self.assertEqual(memory["probs"].shape, (1, 10))

            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                outputs = list(pool.map(lambda _: runner.execute({"image": self.image}), range(8)))
            for output in outputs:
                self.assert_matches(output["probs"])

    def test_asyncio_sees_request_failures_as_exceptions(self):
        with libmrt.ModelRunner(self.model) as runner:
            runner.insert_simulated_error("relu", libmrt.SimulatedError.EXCHANGE_ERROR)

            async def until_failure():
                for _ in range(3):
                    await runner.execute_async({"image": self.image})

            with self.assertRaises(libmrt.DeviceError) as caught:
                asyncio.run(until_failure())
            self.assertEqual(caught.exception.recovery_action,
                             libmrt.RecoveryAction.PARTITION_RESET)

    def test_statistics(self):
        with libmrt.ModelRunner(self.model) as runner:
            self.assert_error(libmrt.NotFoundError, "", runner.time_trace)
            for _ in range(5):
                runner.execute({"image": self.image})
            last = runner.time_trace()
            self.assertGreater(last.request_us, 0)
            self.assertGreaterEqual(last.request_us, last.computation_us)
            self.assertEqual(runner.statistics_count().request_us, 5)
            self.assertGreater(runner.statistics_mean().request_us, 0)
            median = runner.statistics_percentile(0.5)
            self.assertLessEqual(median.request_us, runner.statistics_percentile(1.0).request_us)
            oldest = runner.time_trace(index=0)
            self.assertGreater(oldest.request_us, 0)
            self.assert_error(libmrt.InvalidArgumentError, "", lambda: runner.time_trace(index=-2))
            self.assert_error(libmrt.InvalidArgumentError, "", lambda: runner.statistics_mean(3))

    def test_config_round_trip_and_durations(self):
        with libmrt.ModelRunner(self.model, timeout=2.5, batch_size_timeout=None,
                                data_parallel_timeout=0.25, ring_buffer_size_multiplier=3,
                                request_tracepoints_buffer_size=7) as runner:
            config = runner.config()
            self.assertEqual(config["timeout"], 2.5)
            self.assertIsNone(config["batch_size_timeout"])
            self.assertEqual(config["data_parallel_timeout"], 0.25)
            self.assertEqual(config["ring_buffer_size_multiplier"], 3)
            self.assertEqual(config["request_tracepoints_buffer_size"], 7)
            self.assertIsNone(config["batching_dim"])
            self.assertEqual(runner.model().info().executable, "mlp")
        self.assert_error(libmrt.InvalidArgumentError, "timeout: expected seconds >= 0 or None",
                          lambda: libmrt.ModelRunner(self.model, timeout=-1))
        self.assert_error(libmrt.InvalidArgumentError, "timeout: expected seconds",
                          lambda: libmrt.ModelRunner(self.model, timeout="5"))

    def test_batching_dim_takes_any_number_of_samples(self):
        images = np.random.default_rng(3).random((3, 784), dtype=np.float32)
        with libmrt.ModelRunner(self.model, batching_dim=0) as runner:
            outputs = runner.execute({"image": images})
            self.assertEqual(outputs["probs"].shape, (3, 10))
            self.assert_matches(outputs["probs"], reference_probs(self.model, images))
            memory = runner.execute_alloc({"image": images})
            self.assertEqual(memory["probs"].shape, (3, 10))
            self.assert_error(libmrt.InvalidArgumentError, "expected shape ('N', 784)",
                              lambda: runner.execute({"image": images[:, :700].copy()}))

    def test_frozen_inputs_devices_and_the_flush_callback(self):
        zeros = np.zeros((128, 10), np.float32)
        flushed = []
        with libmrt.DeviceManager() as manager:
            device = manager.get_specific_device(2)
            with libmrt.ModelRunner(self.model, frozen_inputs={"w2": zeros}, devices=[device],
                                    timeout=0.05, flush_callback=flushed.append) as runner:
                device.close()  # the runner keeps its own reference
                probs = runner.execute({"image": self.image})["probs"]
                b2 = self.model.tensor_data("b2").astype(np.float64)
                self.assert_matches(probs.ravel(), np.exp(b2) / np.exp(b2).sum())
                self.assertNotIn("w2", runner.execute_inputs)
                wait_until(lambda: flushed, 5)  # idle: it times out waiting for input
            self.assertIn("image", flushed)
            with manager.get_specific_device(2) as again:  # released with the runner
                self.assertEqual(again.id, 2)
        self.assert_error(libmrt.InvalidArgumentError, "not callable",
                          lambda: libmrt.ModelRunner(self.model, flush_callback=3))
        self.assert_error(libmrt.InvalidArgumentError, "frozen input 'w2'",
                          lambda: libmrt.ModelRunner(self.model, frozen_inputs={"w2": [0.0]}))

    def runner_choosing(self, choose, calls=3):
        """A runner timing out every 2 ms while idle, asking choose(selection)
        which queues to pad, once it was asked `calls` times; returns it and
        the tensor ids it was asked for."""
        asked = []

        def select(tensor_id, selection):
            choose(selection)
            asked.append(tensor_id)
        runner = libmrt.ModelRunner(self.model, timeout=0.002, ring_buffer_size_multiplier=1,
                                    flush_select_callback=select)
        self.assertTrue(wait_until(lambda: len(asked) >= calls, 10))
        return runner, asked

    def test_flush_select_callback_naming_every_queue_lets_the_device_go_on(self):
        def both(selection):
            selection.add_input("image")
            selection.add_output("probs")
        runner, asked = self.runner_choosing(both)
        with runner:  # each timeout padded image and probs: the device ran on padding
            self.assert_matches(runner.execute({"image": self.image})["probs"])
        self.assertEqual(set(asked), {"image"})

    def test_flush_select_callback_pads_only_the_named_queues(self):
        # Only probs padded: the device, still waiting for image, never runs
        # on padding, so a request's own output entry sits behind the padded
        # one and the request is still pending when the runner goes.
        runner, _ = self.runner_choosing(lambda selection: selection.add_output("probs"), calls=1)
        pending = runner.execute_async({"image": self.image})
        self.assertFalse(pending.wait(0.2))
        runner.close()
        self.assertTrue(pending.wait(0))
        self.assertEqual(pending.status(), libmrt.Status.CANCELLED)

    def test_flush_select_callback_naming_no_queue_is_logged_and_pads_every_queue(self):
        errors, level = [], libmrt.get_log_level()
        libmrt.set_log_level(max(level, libmrt.LogLevel.ERR))
        libmrt.set_log_callback(lambda level, message: errors.append(message)
                                if level == libmrt.LogLevel.ERR else None)
        try:
            runner, _ = self.runner_choosing(lambda selection: selection.add_input("nope"))
            with runner:
                self.assert_matches(runner.execute({"image": self.image})["probs"])
            logged = wait_until(lambda: any("no input queue named 'nope'" in e and
                                            "flushing every queue" in e for e in errors), 5)
        finally:
            libmrt.set_log_callback(None)
            libmrt.set_log_level(level)
        self.assertTrue(logged, errors)

    def test_flush_select_callback_misuse(self):
        kept, refused = [], []

        def keep(selection):
            kept.append(selection)
            try:
                selection.add_input(3)
            except libmrt.InvalidArgumentError as error:
                refused.append(error.message)
        with CallbackErrors() as caught:
            runner, _ = self.runner_choosing(keep, calls=1)
            runner.close()
        self.assertEqual(caught.errors, [])
        self.assertIn("queue name 3 is not a str", refused[0])
        self.assert_error(libmrt.InvalidArgumentError, "valid only during flush_select_callback",
                          lambda: kept[0].add_output("probs"))
        self.assert_error(libmrt.InvalidArgumentError, "both set",
                          lambda: libmrt.ModelRunner(self.model, flush_callback=print,
                                                     flush_select_callback=print))
        self.assert_error(libmrt.InvalidArgumentError, "not callable",
                          lambda: libmrt.ModelRunner(self.model, flush_select_callback=3))


class ModuleTest(MrtTestCase):
    def test_version_and_errors(self):
        self.assertRegex(libmrt.version(), r"^0\.\d+\.\d+$")
        self.assertEqual(libmrt.status_string(libmrt.Status.NOT_FOUND), "MRT_NOT_FOUND: not found")
        error = libmrt.MrtError(2, "x")
        self.assertIs(error.code, libmrt.Status.NOT_FOUND)
        self.assertIsInstance(error, libmrt.NotFoundError)
        self.assertEqual(str(error), "MRT_NOT_FOUND: x")


if __name__ == "__main__":
    unittest.main()

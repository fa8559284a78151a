#!/usr/bin/python3
"""Unit tests of the mrt ctypes binding (stdlib unittest): results against
numpy reference math, and misuse - wrong names, sizes, dtypes and layouts,
use after close, callbacks that raise - giving MrtError, never a crash.

    MRT_TEST_MODEL=mlp.popef python3 test_mrt.py
"""
import gc
import os
import subprocess
import sys
import threading
import time
import unittest
import weakref

import numpy as np

import example
import mrt

MODEL = os.environ.get("MRT_TEST_MODEL", "")


def wait_until(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


class CallbackErrors:
    """Replaces mrt.callback_error_hook while a test runs, collecting."""

    def __init__(self):
        self.errors = []
        self.lock = threading.Lock()

    def __enter__(self):
        self.saved = mrt.callback_error_hook
        mrt.callback_error_hook = self.record
        return self

    def record(self, where, exception):
        with self.lock:
            self.errors.append((where, exception))

    def __exit__(self, *exc_info):
        mrt.callback_error_hook = self.saved


@unittest.skipUnless(MODEL, "MRT_TEST_MODEL must name the mlp model")
class RunnerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = mrt.Model(MODEL)
        cls.runner = mrt.ModelRunner(cls.model)
        cls.image = example.deterministic_image()
        cls.expected = example.reference_probs(cls.model, cls.image)

    @classmethod
    def tearDownClass(cls):
        cls.runner.close()
        cls.model.close()

    def assert_matches_reference(self, probs, image=None):
        expected = self.expected if image is None else example.reference_probs(self.model, image)
        self.assertEqual(int(np.argmax(probs)), int(np.argmax(expected)))
        np.testing.assert_allclose(probs.ravel(), expected.ravel(), rtol=1e-5, atol=1e-7)

    def assert_error(self, code, fragment, action):
        with self.assertRaises(mrt.MrtError) as caught:
            action()
        self.assertEqual(caught.exception.code, code)
        self.assertIn(fragment, caught.exception.message)
        self.assertIn(fragment, str(caught.exception))
        return caught.exception

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
                self.assertEqual(future.status(), mrt.Status.OK)
                self.assertEqual(future.error_message(), "")
            with self.runner.execute_alloc({"image": image}) as memory:
                self.assertEqual(memory.names(), ["probs"])
                self.assert_matches_reference(memory["probs"], image)

    def test_tensor_data_is_a_read_only_view_that_outlives_close(self):
        model = mrt.Model(MODEL)
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
        self.assert_error(mrt.Status.FAILED_PRECONDITION, "TensorMemory is closed",
                          lambda: memory["probs"])

    # -- misuse -------------------------------------------------------------

    def test_unknown_input_name_carries_the_library_message(self):
        error = self.assert_error(
            mrt.Status.NOT_FOUND, "unknown input 'imagee'",
            lambda: self.runner.execute({"image": self.image, "imagee": self.image}))
        self.assertIn("mrt_model_runner_execute", error.message)
        self.assert_error(mrt.Status.NOT_FOUND, "unknown input 'imagee': execute inputs are image (missing: image)",
                          lambda: self.runner.execute({"imagee": self.image}))

    def test_unknown_names_elsewhere(self):
        self.assert_error(mrt.Status.NOT_FOUND, "no TensorData named 'w3'",
                          lambda: self.model.tensor_data("w3"))
        memory = self.runner.execute_alloc({"image": self.image})
        self.assert_error(mrt.Status.NOT_FOUND, "'nope'", lambda: memory["nope"])
        memory.close()
        self.assert_error(mrt.Status.NOT_FOUND, "no such PopEF file",
                          lambda: mrt.Model(MODEL + ".missing"))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "unknown option(s) replicas",
                          lambda: mrt.ModelRunner(self.model, replicas=2))

    def test_wrong_size_dtype_and_layout_are_refused_before_c(self):
        probs = np.empty((1, 10), np.float32)
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected 3136 bytes",
                          lambda: self.runner.execute({"image": self.image[:, :783].copy()}))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected 40 bytes",
                          lambda: self.runner.execute({"image": self.image},
                                                      {"probs": np.empty((1, 11), np.float32)}))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected dtype float32, got float64",
                          lambda: self.runner.execute({"image": self.image.astype(np.float64)}))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected dtype float32, got int32",
                          lambda: self.runner.execute({"image": self.image},
                                                      {"probs": np.empty((1, 10), np.int32)}))
        strided = np.zeros((1, 1568), np.float32)[:, ::2]  # right size, not contiguous
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "C-contiguous",
                          lambda: self.runner.execute({"image": strided}))
        read_only = np.empty((1, 10), np.float32)
        read_only.flags.writeable = False
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "read-only",
                          lambda: self.runner.execute({"image": self.image}, {"probs": read_only}))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected a numpy array, got list",
                          lambda: self.runner.execute({"image": [0.0] * 784}))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected a dict",
                          lambda: self.runner.execute([self.image]))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "expected 3136 bytes",
                          lambda: self.runner.execute_async({"image": self.image[:, :10].copy()}))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "replica_id 1 out of range",
                          lambda: self.runner.execute({"image": self.image}, {"probs": probs}, 1))
        # Still serving.
        self.runner.execute({"image": self.image}, {"probs": probs})
        self.assert_matches_reference(probs)

    def test_use_after_close_raises(self):
        model = mrt.Model(MODEL)
        with mrt.ModelRunner(model) as runner:
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
                (lambda: future.result(), "Future"),
                (lambda: future.done(), "Future"),
                (lambda: future.add_done_callback(print), "Future"),
                (lambda: len(memory), "TensorMemory")]:
            self.assert_error(mrt.Status.FAILED_PRECONDITION, f"{kind} is closed", action)

    def test_runner_from_a_path_and_pending_requests_at_close(self):
        runner = mrt.ModelRunner(MODEL)
        futures = [runner.execute_async({"image": self.image}) for _ in range(4)]
        runner.close()  # pending requests complete, with CANCELLED if not run
        for future in futures:
            self.assertTrue(future.wait(timeout=30))
            self.assertIn(future.status(), (mrt.Status.OK, mrt.Status.CANCELLED))
            if future.status() == mrt.Status.OK:
                self.assert_matches_reference(future.result()["probs"])
            else:
                self.assert_error(mrt.Status.CANCELLED, "", future.result)
            future.close()

    def test_failed_request_raises_from_result(self):
        with mrt.ModelRunner(self.model) as runner:
            self.assert_error(mrt.Status.NOT_FOUND, "no program step named 'nope'",
                              lambda: runner.insert_simulated_error("nope"))
            runner.insert_simulated_error("relu")
            # The fault hits the replica's next Main run, which may be the
            # one after the run already waiting for input.
            failed = False
            for _ in range(3):
                with runner.execute_async({"image": self.image}) as future:
                    future.wait(timeout=30)
                    if future.status() == mrt.Status.OK:
                        self.assert_matches_reference(future.result()["probs"])
                        continue
                    self.assert_error(mrt.Status.DEVICE_ERROR, "TILE_EXCEPTION", future.result)
                    self.assertIn("TILE_EXCEPTION", future.error_message())
                    failed = True
                    break
            self.assertTrue(failed)
            # Without auto_reset the replica is out of service.
            self.assert_error(mrt.Status.DEVICE_ERROR, "out of service",
                              lambda: runner.execute({"image": self.image}))

    # -- callbacks ----------------------------------------------------------

    def test_done_callbacks_run_once_and_are_released(self):
        calls = []
        done = threading.Event()

        def on_done(status):
            calls.append(status)
            done.set()

        reference = weakref.ref(on_done)
        with self.runner.execute_async({"image": self.image}) as future:
            future.add_done_callback(on_done)
            self.assertTrue(done.wait(30))
            future.result()
            future.add_done_callback(on_done)  # already done: runs at once, here
        self.assertEqual(calls, [mrt.Status.OK, mrt.Status.OK])
        del on_done
        gc.collect()
        self.assertTrue(wait_until(lambda: reference() is None),
                        "the library did not release the callback")

    def test_a_done_callback_may_close_its_runner(self):
        # The callback runs on the runner's device thread, which destroying
        # the runner joins: the binding must not destroy it there.
        runner = mrt.ModelRunner(self.model)
        closed = threading.Event()

        def close_runner(status):
            runner.close()
            closed.set()

        with runner.execute_async({"image": self.image}) as future:
            future.add_done_callback(close_runner)
            self.assert_matches_reference(future.result(timeout=30)["probs"])
        self.assertTrue(closed.wait(30))
        self.assertTrue(runner.closed)
        self.assert_error(mrt.Status.FAILED_PRECONDITION, "ModelRunner is closed",
                          lambda: runner.execute({"image": self.image}))

    def test_raising_done_callback_is_reported_not_fatal(self):
        with CallbackErrors() as collected:
            with self.runner.execute_async({"image": self.image}) as future:
                future.add_done_callback(lambda status: 1 / 0)
                self.assert_matches_reference(future.result()["probs"])
                future.add_done_callback(lambda status: [][1])
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

        saved_level = mrt.get_log_level()
        mrt.set_log_level(mrt.LogLevel.INFO)
        try:
            with CallbackErrors() as collected:
                mrt.set_log_callback(Sink())
                mrt.log_message(mrt.LogLevel.WARN, "from python")
                mrt.log_message(mrt.LogLevel.WARN, "raise please")
                mrt.log_message(mrt.LogLevel.INFO, "after the exception")
                mrt.set_log_callback(None)
            self.assertEqual(len(collected.errors), 1)
            self.assertIn("log callback", collected.errors[0][0])
            self.assertIsInstance(collected.errors[0][1], RuntimeError)
            collected.errors.clear()  # its traceback refers to the Sink
            gc.collect()
            self.assertTrue(released.wait(10), "the library did not release the log callback")
        finally:
            mrt.set_log_level(saved_level)
        texts = [m for _, m in messages]
        self.assertTrue(any("from python" in t for t in texts), texts)
        self.assertTrue(any("after the exception" in t for t in texts), texts)
        self.assertEqual([level for level, m in messages if "from python" in m], [mrt.LogLevel.WARN])
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "not callable",
                          lambda: mrt.set_log_callback(42))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "", lambda: mrt.set_log_level(17))


    def test_interpreter_exit_with_everything_open(self):
        # Runners with requests in flight, done callbacks and a log callback
        # still registered at exit: the binding takes them back before the
        # interpreter finalizes, so no library thread calls into a dead one.
        script = (
            "import numpy as np, mrt\n"
            "mrt.set_log_level(mrt.LogLevel.DEBUG)\n"
            "mrt.set_log_callback(lambda level, message: None)\n"
            f"runner = mrt.ModelRunner({MODEL!r})\n"
            "image = np.zeros((1, 784), np.float32)\n"
            "futures = [runner.execute_async({'image': image}) for _ in range(8)]\n"
            "for future in futures: future.add_done_callback(lambda status: None)\n"
            f"weights = mrt.Model({MODEL!r}).tensor_data('w1')\n")
        completed = subprocess.run([sys.executable, "-B", "-c", script], cwd=os.path.dirname(
            os.path.abspath(mrt.__file__)), capture_output=True, text=True, timeout=60)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNotIn("Traceback", completed.stderr)


class ModuleTest(unittest.TestCase):
    def test_version_and_errors(self):
        self.assertRegex(mrt.version(), r"^0\.\d+\.\d+$")
        self.assertEqual(mrt.status_string(mrt.Status.NOT_FOUND), "MRT_NOT_FOUND: not found")
        error = mrt.MrtError(2, "x")
        self.assertIs(error.code, mrt.Status.NOT_FOUND)
        self.assertEqual(str(error), "MRT_NOT_FOUND: x")


if __name__ == "__main__":
    unittest.main(verbosity=2)

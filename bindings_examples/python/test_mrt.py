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
import tempfile
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


# -- building models ----------------------------------------------------------

def small_target():
    return mrt.Target("ipu-model-small")


class GraphErrorsTest(unittest.TestCase):
    """Graph building errors: MrtError with the library's status and message."""

    def setUp(self):
        self.graph = mrt.Graph(small_target())

    def tearDown(self):
        self.graph.close()

    def assert_error(self, code, fragment, action):
        with self.assertRaises(mrt.MrtError) as caught:
            action()
        self.assertEqual(caught.exception.code, code)
        self.assertIn(fragment, caught.exception.message)
        return caught.exception

    def test_target_fields(self):
        target = mrt.Target("GC200", num_ipus=2)
        self.assertEqual((target.name, target.num_ipus, target.tiles_per_ipu), ("GC200", 2, 1472))
        target.clock_hz = 1e9
        target.name = "what-if"
        self.assertEqual((target.clock_hz, target.name), (1e9, "what-if"))
        with self.assertRaises(AttributeError):
            target.clock_speed = 1
        self.assertEqual(self.graph.target().tiles_per_ipu, 4)
        self.assertEqual(self.graph.replication_factor(), 1)
        self.assert_error(mrt.Status.NOT_FOUND, "unknown system 'gc300'",
                          lambda: mrt.Target("gc300"))
        bad = small_target()
        bad.tiles_per_ipu = 0
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "tiles_per_ipu", lambda: mrt.Graph(bad))

    def test_wrong_dtype(self):
        self.assert_error(mrt.Status.INVALID_ARGUMENT,
                          "constant 'c': expected dtype float32 for F32, got float64",
                          lambda: self.graph.add_constant(np.zeros(4), mrt.DataType.F32, "c"))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "64-bit type",
                          lambda: self.graph.add_variable(mrt.DataType.F64, (4,), "v"))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "no mrt data type",
                          lambda: self.graph.add_variable(np.complex64, (4,), "v"))

    def test_unknown_codelet_and_field(self):
        compute_set = self.graph.add_compute_set("cs")
        self.assert_error(mrt.Status.NOT_FOUND, "codelet 'Frobnicate' is not a codelet",
                          lambda: self.graph.add_vertex(compute_set, "Frobnicate", 0))
        vertex = self.graph.add_vertex(compute_set, "Add", 0)
        x = self.graph.add_variable(np.float32, (4,), "x")
        self.assert_error(mrt.Status.NOT_FOUND, "codelet Add has no field 'nope'",
                          lambda: self.graph.connect(vertex, "nope", x))
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "is a compute set, not a tensor",
                          lambda: self.graph.connect(vertex, "in0", compute_set))
        codelets = mrt.codelets()
        self.assertEqual(set(codelets["Add"].fields), {"in0", "in1", "out"})
        self.assertEqual(codelets["Add"].fields["out"], mrt.FieldDirection.OUT)
        self.assertEqual(codelets["Fill"].attributes["value"], (0.0,))

    def test_compile_errors_and_compiling_twice(self):
        program = self.graph.sequence(name="main")
        x = self.graph.add_variable(np.float32, (8,), "x")
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "variable 'x' element 0 has no tile mapping",
                          lambda: self.graph.compile([program]))
        self.graph.map_linearly(x, 2)
        progress = []
        with self.graph.compile([program], progress=lambda s, n: progress.append((s, n))):
            pass
        self.assertTrue(progress)
        self.assert_error(mrt.Status.FAILED_PRECONDITION, "",
                          lambda: self.graph.compile([program]))
        self.assert_error(mrt.Status.FAILED_PRECONDITION, "",
                          lambda: self.graph.add_variable(np.float32, (1,), "late"))
        self.graph.close()
        self.assert_error(mrt.Status.FAILED_PRECONDITION, "Graph is closed",
                          lambda: self.graph.sequence())

    def test_views_and_mapping(self):
        g = self.graph
        x = g.add_variable(np.float32, (2, 4), "x")
        g.map_linearly(x, 2)
        self.assertEqual(g.tile_mapping(x), [mrt.TileInterval(0, 2, 0), mrt.TileInterval(2, 4, 1),
                                             mrt.TileInterval(4, 6, 2), mrt.TileInterval(6, 8, 3)])
        self.assertEqual(g.tensor_info(g.slice(x, 1, 3, dim=1)).shape, (2, 2))
        self.assertEqual(g.tensor_info(g.index(x, 1)).shape, (4,))
        self.assertEqual(g.tensor_info(g.transpose(x)).shape, (4, 2))
        self.assertEqual(g.tensor_info(g.reshape(x, (8, 1))).shape, (8, 1))
        self.assertEqual(g.tensor_info(g.concat([x, x], dim=0)).shape, (4, 4))
        info = g.tensor_info(g.flatten(x))
        self.assertEqual((info.shape, info.dtype, info.num_bytes, info.is_constant),
                         ((8,), np.float32, 32, False))
        c = g.add_constant(np.arange(6, dtype=np.int32).reshape(2, 3), name="c")
        self.assertEqual(g.tensor_info(c).data_type, mrt.DataType.S32)
        self.assertTrue(g.tensor_info(c).is_constant)
        self.assertTrue(g.tensor_info(g.add_constant_filled(np.float16, (3,), 1.5)).is_constant)
        g.set_tile_mapping(c, 3)
        self.assertEqual(g.tile_mapping(c), [mrt.TileInterval(0, 6, 3)])
        self.assert_error(mrt.Status.INVALID_ARGUMENT, "",
                          lambda: g.reshape(x, (3, 3)))


class EngineTest(unittest.TestCase):
    """A small graph run by an Engine on an IPU Model device."""

    N = 8

    @classmethod
    def setUpClass(cls):
        n = cls.N
        cls.bias = np.linspace(-1, 1, n).astype(np.float32)
        with mrt.Graph(small_target()) as g:
            x = g.add_variable(np.float32, (n,), "x")
            g.map_linearly(x, 2)
            bias = g.add_constant(cls.bias, mrt.DataType.F32, "bias")
            g.map_linearly(bias, 2)
            y = g.add_variable(np.float32, (n,), "y")
            g.map_linearly(y, 2)
            # y = x + bias, one Add vertex per tile, and y = relu(y) by the ops.
            compute_set = g.add_compute_set("add")
            for tile in range(4):
                part = lambda t: g.slice(t, 2 * tile, 2 * tile + 2)
                g.add_vertex(compute_set, "Add", tile,
                             {"in0": part(x), "in1": part(bias), "out": part(y)})
            main = g.sequence(name="main")
            x_in = g.add_host_to_device_fifo("x_in", np.float32, n)
            g.sequence_add(main, g.copy_from_stream(x_in, x), g.execute(compute_set))
            r = g.unary(main, "Relu", y, name="relu")
            g.sequence_add(main, g.copy_to_stream(r, g.add_device_to_host_fifo("y_out", np.float32, n)),
                           g.print_tensor("y", y))
            g.create_host_write("x", x)
            g.create_host_read("y", y)
            slot = g.add_remote_buffer("rb", np.float32, n, repeats=2)
            save = g.sequence(g.copy_to_remote_buffer(y, slot, 1), name="save")
            cls.executable = g.compile([main, save])
        cls.manager = mrt.DeviceManager()
        cls.device = cls.manager.create_small_ipu_model_device()

    @classmethod
    def tearDownClass(cls):
        cls.device.close()
        cls.manager.close()
        cls.executable.close()

    def setUp(self):
        self.engine = mrt.Engine(self.executable)
        self.engine.load(self.device)
        self.engine.set_print_callback(lambda line: None)

    def tearDown(self):
        self.engine.close()

    def expected(self, x):
        return np.maximum(x + self.bias, 0)

    def test_executable(self):
        exe = self.executable
        info = exe.info()
        self.assertEqual((info.num_programs, info.num_tiles, info.num_streams, info.num_remote_buffers,
                          info.num_host_reads, info.num_host_writes), (2, 4, 2, 1, 1, 1))
        self.assertEqual(exe.program_name(0), "main")
        self.assertEqual(exe.target().tiles_per_ipu, 4)
        memory = exe.memory_per_tile()
        self.assertEqual((memory.dtype, memory.shape), (np.uint64, (4,)))
        self.assertEqual(int(memory.sum()), info.total_memory_bytes)
        self.assertEqual(len(exe.steps()), info.num_steps)
        handles = exe.handles()
        self.assertEqual(handles["y_out"].kind, mrt.HandleKind.DEVICE_TO_HOST)
        self.assertEqual(handles["rb"].repeats, 2)
        self.assertEqual(handles["x"].kind, mrt.HandleKind.HOST_WRITE)
        copy = mrt.Executable.deserialize(exe.serialize())
        self.assertEqual(copy.info().hash, info.hash)
        with self.assertRaises(mrt.MrtError) as caught:
            mrt.Executable.deserialize(b"not an executable")
        self.assertEqual(caught.exception.code, mrt.Status.CORRUPT_MODEL)

    def test_run_with_stream_callbacks(self):
        rng = np.random.default_rng(3)
        inputs = [rng.standard_normal(self.N).astype(np.float32) for _ in range(3)]
        outputs, lines = [], []

        def feed(array, replica):
            self.assertEqual((array.dtype, array.shape, replica), (np.float32, (self.N,), 0))
            array[:] = inputs[len(outputs)]

        self.engine.connect_stream("x_in", feed)
        self.engine.connect_stream("y_out", lambda array, replica: outputs.append(array.copy()))
        self.engine.set_print_callback(lines.append)
        for x in inputs:
            self.engine.run(0)
        for x, y in zip(inputs, outputs):
            np.testing.assert_allclose(y, self.expected(x), rtol=1e-6)
        np.testing.assert_allclose(self.engine.read_tensor("y"), inputs[-1] + self.bias, rtol=1e-6)
        self.assertEqual(len(lines), 3)
        self.assertTrue(lines[0].startswith("y: ["), lines[0])
        self.assertGreater(self.engine.device_cycles(), 0)

    def test_run_with_buffers_host_access_and_remote_buffers(self):
        x = np.arange(2 * self.N, dtype=np.float32).reshape(2, self.N) - 6
        y = np.zeros_like(x)
        self.engine.connect_stream_to_buffer("x_in", x)
        self.engine.connect_stream_to_buffer("y_out", y)
        self.engine.run(0)
        self.engine.run(0)
        np.testing.assert_allclose(y, self.expected(x), rtol=1e-6)
        self.engine.run(1)  # save: y into slot 1
        np.testing.assert_allclose(self.engine.copy_from_remote_buffer("rb", 1), x[1] + self.bias)
        self.engine.copy_to_remote_buffer("rb", np.ones(self.N, np.float32), 0)
        np.testing.assert_array_equal(self.engine.copy_from_remote_buffer("rb", 0), 1)
        self.engine.write_tensor("x", np.full(self.N, 7, np.float32))
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.write_tensor("x", np.zeros(self.N))
        self.assertEqual(caught.exception.code, mrt.Status.INVALID_ARGUMENT)
        self.assertIn("expected dtype float32, got float64", caught.exception.message)
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.write_tensor("x", np.zeros(3, np.float32))
        self.assertEqual(caught.exception.code, mrt.Status.INVALID_ARGUMENT)

    def test_errors_stop_profiling(self):
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.run(0)  # x_in is not connected
        self.assertEqual(caught.exception.code, mrt.Status.FAILED_PRECONDITION)
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.connect_stream("nope", lambda array, replica: None)
        self.assertEqual(caught.exception.code, mrt.Status.NOT_FOUND)
        with CallbackErrors() as collected:
            def fail(array, replica):
                raise RuntimeError("stream callback failure")
            self.engine.connect_stream("x_in", fail)
            self.engine.connect_stream("y_out", lambda array, replica: None)
            self.engine.set_profiling(True)
            self.engine.run(0)  # the exception is reported, the run carries on
        self.assertEqual(len(collected.errors), 1)
        self.assertIn("stream callback", collected.errors[0][0])
        self.engine.connect_stream("x_in", lambda array, replica: array.fill(1))
        self.assertIn("add", self.engine.profile_text(mrt.ProfileFormat.SUMMARY).lower())
        self.assertTrue(self.engine.profile_text(mrt.ProfileFormat.TRACE).lstrip().startswith(("{", "[")))
        step = [s.name for s in self.executable.steps()].index("add")
        self.engine.insert_simulated_error(mrt.SimulatedError.TILE_EXCEPTION, step, 0)
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.run(0)
        self.assertEqual(caught.exception.code, mrt.Status.DEVICE_ERROR)
        self.engine.load(self.device)
        self.engine.insert_simulated_error(mrt.SimulatedError.MEMORY_PARITY, step, 1)
        self.engine.erase_simulated_error(step, 1)
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.erase_simulated_error(step, 1)
        self.assertEqual(caught.exception.code, mrt.Status.NOT_FOUND)
        self.engine.insert_simulated_error(mrt.SimulatedError.MEMORY_PARITY, step, 1)
        self.engine.clear_simulated_errors()
        self.engine.run(0)
        self.engine.close()
        with self.assertRaises(mrt.MrtError) as caught:
            self.engine.run(0)
        self.assertEqual(caught.exception.code, mrt.Status.FAILED_PRECONDITION)


class ModelBuilderTest(unittest.TestCase):
    """A built model: bytes round trip, files, and serving it."""

    @staticmethod
    def build(scale=None):
        scale = np.array([2.0, -1.0, 0.5, 3.0], np.float32) if scale is None else scale
        with mrt.Graph(mrt.Target("gc200")) as g:  # ModelRunner's default device
            x, w = (g.create_tensor(np.float32, (4,), name) for name in ("x", "w"))
            load, main = g.sequence(name="load"), g.sequence(name="main")
            g.sequence_add(load, g.copy_from_stream(g.add_host_to_device_fifo("w", np.float32, 4), w))
            g.sequence_add(main, g.copy_from_stream(g.add_host_to_device_fifo("x", np.float32, 4), x))
            y = g.binary(main, "Mul", x, w, "y")
            g.sequence_add(main, g.copy_to_stream(y, g.add_device_to_host_fifo("y", np.float32, 4)))
            executable = g.compile([load, main])
        with executable, mrt.ModelBuilder("scale", executable) as builder:
            builder.set_program_flow(mrt.Phase.LOAD, [0])
            builder.set_program_flow(mrt.Phase.MAIN, [1])
            builder.add_anchor("w", (4,), [0], data_source=mrt.DataSource.TENSOR_DATA)
            builder.add_tensor_data("w", scale)
            builder.add_anchor("x", (1, 4), [1])
            builder.add_anchor("y", (1, 4), [1])
            with self_check_error(mrt.Status.INVALID_ARGUMENT, "y"):
                builder.add_anchor("y", (1, 4), [1])  # a duplicate
            return builder.build(), scale

    def test_round_trip_through_bytes_and_files(self):
        model, scale = self.build()
        with model:
            data = model.to_bytes()
            self.assertEqual(model.info().executable, "scale")
            self.assertEqual(model.anchor("w").data_source, mrt.DataSource.TENSOR_DATA)
            with model.executable() as executable:
                self.assertEqual(executable.info().num_programs, 2)
            work = os.environ.get("MRT_TEST_WORK_DIR") or tempfile.mkdtemp()
            path = os.path.join(work, "scale.popef")
            model.write(path)
            with open(path, "rb") as file:
                self.assertEqual(file.read(), data)
            split = [os.path.join(work, "split.popef"), os.path.join(work, "split-data.popef")]
            model.write_split(*split)
        with mrt.Model.from_bytes(data) as loaded:
            self.assertEqual(loaded.to_bytes(), data)
            np.testing.assert_array_equal(loaded.tensor_data("w"), scale)
            with mrt.ModelRunner(loaded) as runner:
                x = np.array([[1, 2, 3, 4]], np.float32)
                np.testing.assert_allclose(runner.execute({"x": x})["y"], x * scale)
        with mrt.Model(split) as loaded:
            np.testing.assert_array_equal(loaded.tensor_data("w"), scale)
        with self.assertRaises(mrt.MrtError) as caught:
            mrt.Model.from_bytes(data[:100])
        self.assertEqual(caught.exception.code, mrt.Status.CORRUPT_MODEL)

    def test_build_model_example(self):
        work = os.environ.get("MRT_TEST_WORK_DIR") or tempfile.mkdtemp()
        completed = subprocess.run(
            [sys.executable, "-B", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                "build_model.py"),
             os.path.join(work, "tiny_mlp.popef")], capture_output=True, text=True, timeout=60)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertIn("build_model.py: ok", completed.stdout)


class OnnxTest(unittest.TestCase):
    """compile_onnx on a model made here with the onnx package: y = relu(x @ w + b)."""

    @classmethod
    def setUpClass(cls):
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(7)
        cls.w = rng.standard_normal((6, 3)).astype(np.float32)
        cls.b = rng.standard_normal(3).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["z"]),
             helper.make_node("Relu", ["z"], ["y"])],
            "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
            [numpy_helper.from_array(cls.w, "w"), numpy_helper.from_array(cls.b, "b")])
        cls.onnx_bytes = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()

    def run_model(self, model, x):
        with mrt.ModelRunner(model) as runner:
            return runner.execute({"x": x})["y"].copy()

    def test_compile_from_bytes_and_file_with_batch_and_shapes(self):
        x = np.linspace(-1, 1, 4 * 6, dtype=np.float32).reshape(4, 6)
        want = np.maximum(x @ self.w + self.b, 0)
        steps = []
        model = mrt.compile_onnx(self.onnx_bytes, batch_size=4,
                                 progress=lambda step, total: steps.append((step, total)))
        np.testing.assert_allclose(self.run_model(model, x), want, rtol=1e-5, atol=1e-6)
        self.assertTrue(steps and steps[-1][0] == steps[-1][1], steps)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "dense.onnx")
            with open(path, "wb") as f:
                f.write(self.onnx_bytes)
            model = mrt.compile_onnx(path, input_shapes={"x": [2, 6]}, precision="f16")
        self.assertEqual(model.anchor("x").shape, (2, 6))
        np.testing.assert_allclose(self.run_model(model, x[:2]), want[:2], rtol=1e-2, atol=1e-2)

    def test_errors_carry_status_and_message(self):
        with self.assertRaises(mrt.MrtError) as caught:
            mrt.compile_onnx(self.onnx_bytes, input_shapes={"w": [6, 3]})
        self.assertEqual(caught.exception.status, mrt.Status.INVALID_ARGUMENT)
        self.assertIn("'w', which is not an input", str(caught.exception))
        with self.assertRaises(mrt.MrtError) as caught:
            mrt.compile_onnx(self.onnx_bytes[:40])
        self.assertEqual(caught.exception.status, mrt.Status.CORRUPT_MODEL)
        with self.assertRaises(mrt.MrtError) as caught:
            mrt.compile_onnx("/nonexistent/model.onnx")
        self.assertEqual(caught.exception.status, mrt.Status.NOT_FOUND)
        with self.assertRaises(mrt.MrtError) as caught:
            mrt.compile_onnx(self.onnx_bytes, precision="f8")
        self.assertEqual(caught.exception.status, mrt.Status.INVALID_ARGUMENT)


class self_check_error:
    """with self_check_error(code, fragment): the block raises that MrtError."""

    def __init__(self, code, fragment):
        self.code, self.fragment = code, fragment

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None or not issubclass(kind, mrt.MrtError):
            raise AssertionError(f"expected MrtError {self.code.name}, got {error!r}")
        if error.code != self.code or self.fragment not in error.message:
            raise AssertionError(f"expected MrtError {self.code.name} with {self.fragment!r}, "
                                 f"got {error}")
        return True


if __name__ == "__main__":
    unittest.main(verbosity=2)

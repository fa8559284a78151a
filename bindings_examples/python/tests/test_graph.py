"""Building models: targets, graphs, compiling, executables, engines and
the ModelBuilder, with their errors (MrtError with the library's status
and message)."""
import os
import tempfile
import unittest

import numpy as np

import libmrt
from support import MrtTestCase


def small_target():
    return libmrt.Target("ipu-model-small")


class GraphErrorsTest(MrtTestCase):
    """Graph building errors: MrtError with the library's status and message."""

    def setUp(self):
        self.graph = libmrt.Graph(small_target())

    def tearDown(self):
        self.graph.close()

    def test_target_fields(self):
        target = libmrt.Target("GC200", num_ipus=2)
        self.assertEqual((target.name, target.num_ipus, target.tiles_per_ipu), ("GC200", 2, 1472))
        target.clock_hz = 1e9
        target.name = "what-if"
        self.assertEqual((target.clock_hz, target.name), (1e9, "what-if"))
        with self.assertRaises(AttributeError):
            target.clock_speed = 1
        self.assertEqual(self.graph.target().tiles_per_ipu, 4)
        self.assertEqual(self.graph.replication_factor(), 1)
        self.assert_error(libmrt.NotFoundError, "unknown system 'gc300'",
                          lambda: libmrt.Target("gc300"))
        bad = small_target()
        bad.tiles_per_ipu = 0
        self.assert_error(libmrt.InvalidArgumentError, "tiles_per_ipu", lambda: libmrt.Graph(bad))

    def test_wrong_dtype(self):
        self.assert_error(libmrt.InvalidArgumentError,
                          "constant 'c': expected dtype float32 for F32, got float64",
                          lambda: self.graph.add_constant(np.zeros(4), libmrt.DataType.F32, "c"))
        self.assert_error(libmrt.InvalidArgumentError, "64-bit type",
                          lambda: self.graph.add_variable(libmrt.DataType.F64, (4,), "v"))
        self.assert_error(libmrt.InvalidArgumentError, "no mrt data type",
                          lambda: self.graph.add_variable(np.complex64, (4,), "v"))

    def test_unknown_codelet_and_field(self):
        compute_set = self.graph.add_compute_set("cs")
        self.assert_error(libmrt.NotFoundError, "codelet 'Frobnicate' is not a codelet",
                          lambda: self.graph.add_vertex(compute_set, "Frobnicate", 0))
        vertex = self.graph.add_vertex(compute_set, "Add", 0)
        x = self.graph.add_variable(np.float32, (4,), "x")
        self.assert_error(libmrt.NotFoundError, "codelet Add has no field 'nope'",
                          lambda: self.graph.connect(vertex, "nope", x))
        self.assert_error(libmrt.InvalidArgumentError, "is a compute set, not a tensor",
                          lambda: self.graph.connect(vertex, "in0", compute_set))
        codelets = libmrt.codelets()
        self.assertEqual(set(codelets["Add"].fields), {"in0", "in1", "out"})
        self.assertEqual(codelets["Add"].fields["out"], libmrt.FieldDirection.OUT)
        self.assertEqual(codelets["Fill"].attributes["value"], (0.0,))

    def test_compile_errors_and_compiling_twice(self):
        program = self.graph.sequence(name="main")
        x = self.graph.add_variable(np.float32, (8,), "x")
        self.assert_error(libmrt.InvalidArgumentError, "variable 'x' element 0 has no tile mapping",
                          lambda: self.graph.compile([program]))
        self.graph.map_linearly(x, 2)
        progress = []
        with self.graph.compile([program], progress=lambda s, n: progress.append((s, n))):
            pass
        self.assertTrue(progress)
        self.assert_error(libmrt.FailedPreconditionError, "",
                          lambda: self.graph.compile([program]))
        self.assert_error(libmrt.FailedPreconditionError, "",
                          lambda: self.graph.add_variable(np.float32, (1,), "late"))
        self.graph.close()
        self.assert_error(libmrt.FailedPreconditionError, "Graph is closed",
                          lambda: self.graph.sequence())

    def test_views_and_mapping(self):
        g = self.graph
        x = g.add_variable(np.float32, (2, 4), "x")
        g.map_linearly(x, 2)
        self.assertEqual(g.tile_mapping(x), [libmrt.TileInterval(0, 2, 0), libmrt.TileInterval(2, 4, 1),
                                             libmrt.TileInterval(4, 6, 2), libmrt.TileInterval(6, 8, 3)])
        self.assertEqual(g.tensor_info(g.slice(x, 1, 3, dim=1)).shape, (2, 2))
        self.assertEqual(g.tensor_info(g.index(x, 1)).shape, (4,))
        self.assertEqual(g.tensor_info(g.transpose(x)).shape, (4, 2))
        self.assertEqual(g.tensor_info(g.reshape(x, (8, 1))).shape, (8, 1))
        self.assertEqual(g.tensor_info(g.concat([x, x], dim=0)).shape, (4, 4))
        info = g.tensor_info(g.flatten(x))
        self.assertEqual((info.shape, info.dtype, info.num_bytes, info.is_constant),
                         ((8,), np.float32, 32, False))
        c = g.add_constant(np.arange(6, dtype=np.int32).reshape(2, 3), name="c")
        self.assertEqual(g.tensor_info(c).data_type, libmrt.DataType.S32)
        self.assertTrue(g.tensor_info(c).is_constant)
        self.assertTrue(g.tensor_info(g.add_constant_filled(np.float16, (3,), 1.5)).is_constant)
        g.set_tile_mapping(c, 3)
        self.assertEqual(g.tile_mapping(c), [libmrt.TileInterval(0, 6, 3)])
        self.assert_error(libmrt.InvalidArgumentError, "",
                          lambda: g.reshape(x, (3, 3)))


class EngineTest(unittest.TestCase):
    """A small graph run by an Engine on an IPU Model device."""

    N = 8

    @classmethod
    def setUpClass(cls):
        n = cls.N
        cls.bias = np.linspace(-1, 1, n).astype(np.float32)
        with libmrt.Graph(small_target()) as g:
            x = g.add_variable(np.float32, (n,), "x")
            g.map_linearly(x, 2)
            bias = g.add_constant(cls.bias, libmrt.DataType.F32, "bias")
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
        cls.manager = libmrt.DeviceManager()
        cls.device = cls.manager.create_small_ipu_model_device()

    @classmethod
    def tearDownClass(cls):
        cls.device.close()
        cls.manager.close()
        cls.executable.close()

    def setUp(self):
        self.engine = libmrt.Engine(self.executable)
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
        self.assertEqual(handles["y_out"].kind, libmrt.HandleKind.DEVICE_TO_HOST)
        self.assertEqual(handles["rb"].repeats, 2)
        self.assertEqual(handles["x"].kind, libmrt.HandleKind.HOST_WRITE)
        copy = libmrt.Executable.deserialize(exe.serialize())
        self.assertEqual(copy.info().hash, info.hash)
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.Executable.deserialize(b"not an executable")
        self.assertEqual(caught.exception.code, libmrt.Status.CORRUPT_MODEL)

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
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.write_tensor("x", np.zeros(self.N))
        self.assertEqual(caught.exception.code, libmrt.Status.INVALID_ARGUMENT)
        self.assertIn("expected dtype float32, got float64", caught.exception.message)
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.write_tensor("x", np.zeros(3, np.float32))
        self.assertEqual(caught.exception.code, libmrt.Status.INVALID_ARGUMENT)

    def test_errors_stop_profiling(self):
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.run(0)  # x_in is not connected
        self.assertEqual(caught.exception.code, libmrt.Status.FAILED_PRECONDITION)
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.connect_stream("nope", lambda array, replica: None)
        self.assertEqual(caught.exception.code, libmrt.Status.NOT_FOUND)
        def fail(array, replica):
            raise RuntimeError("stream callback failure")

        self.engine.connect_stream("x_in", fail)
        self.engine.connect_stream("y_out", lambda array, replica: None)
        self.engine.set_profiling(True)
        with self.assertRaisesRegex(RuntimeError, "stream callback failure"):
            self.engine.run(0)  # the run carries on, then raises the callback's exception
        self.engine.connect_stream("x_in", lambda array, replica: array.fill(1))
        self.assertIn("add", self.engine.profile_text(libmrt.ProfileFormat.SUMMARY).lower())
        self.assertTrue(self.engine.profile_text(libmrt.ProfileFormat.TRACE).lstrip().startswith(("{", "[")))
        step = [s.name for s in self.executable.steps()].index("add")
        self.engine.insert_simulated_error(libmrt.SimulatedError.TILE_EXCEPTION, step, 0)
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.run(0)
        self.assertEqual(caught.exception.code, libmrt.Status.DEVICE_ERROR)
        self.engine.load(self.device)
        self.engine.insert_simulated_error(libmrt.SimulatedError.MEMORY_PARITY, step, 1)
        self.engine.erase_simulated_error(step, 1)
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.erase_simulated_error(step, 1)
        self.assertEqual(caught.exception.code, libmrt.Status.NOT_FOUND)
        self.engine.insert_simulated_error(libmrt.SimulatedError.MEMORY_PARITY, step, 1)
        self.engine.clear_simulated_errors()
        self.engine.run(0)
        self.engine.close()
        with self.assertRaises(libmrt.MrtError) as caught:
            self.engine.run(0)
        self.assertEqual(caught.exception.code, libmrt.Status.FAILED_PRECONDITION)


class ModelBuilderTest(unittest.TestCase):
    """A built model: bytes round trip, files, and serving it."""

    @staticmethod
    def build(scale=None):
        scale = np.array([2.0, -1.0, 0.5, 3.0], np.float32) if scale is None else scale
        with libmrt.Graph(libmrt.Target("gc200")) as g:  # ModelRunner's default device
            x, w = (g.create_tensor(np.float32, (4,), name) for name in ("x", "w"))
            load, main = g.sequence(name="load"), g.sequence(name="main")
            g.sequence_add(load, g.copy_from_stream(g.add_host_to_device_fifo("w", np.float32, 4), w))
            g.sequence_add(main, g.copy_from_stream(g.add_host_to_device_fifo("x", np.float32, 4), x))
            y = g.binary(main, "Mul", x, w, "y")
            g.sequence_add(main, g.copy_to_stream(y, g.add_device_to_host_fifo("y", np.float32, 4)))
            # Save: the last y, for ModelRunner's save_programs_outputs.
            save = g.sequence(g.copy_to_stream(y, g.add_device_to_host_fifo("last_y", np.float32, 4)),
                              name="save")
            executable = g.compile([load, main, save])
        with executable, libmrt.ModelBuilder("scale", executable) as builder:
            builder.set_program_flow(libmrt.Phase.LOAD, [0])
            builder.set_program_flow(libmrt.Phase.MAIN, [1])
            builder.set_program_flow(libmrt.Phase.SAVE, [2])
            builder.add_anchor("last_y", (4,), [2])
            builder.add_anchor("w", (4,), [0], data_source=libmrt.DataSource.TENSOR_DATA)
            builder.add_tensor_data("w", scale)
            builder.add_anchor("x", (1, 4), [1])
            builder.add_anchor("y", (1, 4), [1])
            with self_check_error(libmrt.Status.INVALID_ARGUMENT, "y"):
                builder.add_anchor("y", (1, 4), [1])  # a duplicate
            return builder.build(), scale

    def test_save_programs_write_the_callers_arrays_at_close(self):
        model, scale = self.build()
        last_y = np.zeros(4, np.float32)
        x = np.array([[1, 2, 3, 4]], np.float32)
        with model, libmrt.ModelRunner(model, run_save_programs=True,
                                       save_programs_outputs={0: {"last_y": last_y}}) as runner:
            self.assertEqual(sorted(runner.execute_outputs), ["y"])
            runner.execute({"x": x})
            self.assertFalse(last_y.any())  # written when the runner goes
        np.testing.assert_allclose(last_y, x.ravel() * scale)

    def test_save_programs_outputs_are_checked_against_the_model(self):
        model, _ = self.build()
        work = os.environ.get("MRT_TEST_WORK_DIR") or tempfile.mkdtemp()
        path = os.path.join(work, "scale_save.popef")
        with model:
            model.write(path)
            for source in (model, path):  # a Model, or files the runner loads
                for array, message in ((np.zeros(4, np.float64), "expected dtype float32"),
                                       (np.zeros((1, 4), np.float32), "expected shape (4,)"),
                                       (np.zeros(8, np.float32)[::2], "the array must be C-contiguous")):
                    with self_check_error(libmrt.Status.INVALID_ARGUMENT,
                                          f"save output 'last_y': {message}"):
                        libmrt.ModelRunner(source, run_save_programs=True,
                                           save_programs_outputs={0: {"last_y": array}})
            with self_check_error(libmrt.Status.NOT_FOUND, "nope"):
                libmrt.ModelRunner(path, run_save_programs=True,
                                   save_programs_outputs={0: {"nope": np.zeros(4, np.float32)}})

    def test_round_trip_through_bytes_and_files(self):
        model, scale = self.build()
        with model:
            data = model.to_bytes()
            self.assertEqual(model.info().executable, "scale")
            self.assertEqual(model.anchor("w").data_source, libmrt.DataSource.TENSOR_DATA)
            with model.executable() as executable:
                self.assertEqual(executable.info().num_programs, 3)
            work = os.environ.get("MRT_TEST_WORK_DIR") or tempfile.mkdtemp()
            path = os.path.join(work, "scale.popef")
            model.write(path)
            with open(path, "rb") as file:
                self.assertEqual(file.read(), data)
            split = [os.path.join(work, "split.popef"), os.path.join(work, "split-data.popef")]
            model.write_split(*split)
        with libmrt.Model.from_bytes(data) as loaded:
            self.assertEqual(loaded.to_bytes(), data)
            np.testing.assert_array_equal(loaded.tensor_data("w"), scale)
            with libmrt.ModelRunner(loaded) as runner:
                x = np.array([[1, 2, 3, 4]], np.float32)
                np.testing.assert_allclose(runner.execute({"x": x})["y"], x * scale)
        with libmrt.Model(split) as loaded:
            np.testing.assert_array_equal(loaded.tensor_data("w"), scale)
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.Model.from_bytes(data[:100])
        self.assertEqual(caught.exception.code, libmrt.Status.CORRUPT_MODEL)


class self_check_error:
    """with self_check_error(code, fragment): the block raises that MrtError."""

    def __init__(self, code, fragment):
        self.code, self.fragment = code, fragment

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None or not issubclass(kind, libmrt.MrtError):
            raise AssertionError(f"expected MrtError {self.code.name}, got {error!r}")
        if error.code != self.code or self.fragment not in error.message:
            raise AssertionError(f"expected MrtError {self.code.name} with {self.fragment!r}, "
                                 f"got {error}")
        return True


if __name__ == "__main__":
    unittest.main()

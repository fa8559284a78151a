"""read_onnx_tensor_file (mrt_onnx_read_tensor_file), compile_onnx's
num_io_tiles and num_ipus pipelines, as tests/onnx/onnx_tensor_file_test.cpp,
onnx_options_test.cpp and onnx_io_tiles_test.cpp use them: TensorProto files
written here with the onnx package read as device tensors, and every
refusal with the library's status and message; IO tiles recorded in the
model with the same outputs; two IPUs making a two-stage pipeline."""
import os
import tempfile
import unittest

import numpy as np

import libmrt

try:
    import onnx  # noqa: F401  (Debian's python3-onnx)
except ImportError:
    onnx = None


@unittest.skipIf(onnx is None, "needs the onnx package")
class OnnxTensorFileTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.directory.cleanup()

    def write(self, name, array_or_proto):
        from onnx import numpy_helper
        proto = array_or_proto
        if isinstance(array_or_proto, np.ndarray):
            proto = numpy_helper.from_array(array_or_proto)
        path = os.path.join(self.directory.name, name)
        with open(path, "wb") as f:
            f.write(proto.SerializeToString())
        return path

    def assert_refused(self, error_class, fragment, action):
        with self.assertRaises(error_class) as caught:
            action()
        self.assertIsInstance(caught.exception, libmrt.MrtError)
        self.assertIn(fragment, caught.exception.message)
        return caught.exception

    def test_raw_floats_are_read_in_any_shape(self):
        values = np.array([[1.5, -2.0], [3.25, 0.0]], np.float32)
        path = self.write("x.pb", values)
        got = libmrt.read_onnx_tensor_file(path, np.float32, (2, 2))
        self.assertEqual((got.dtype, got.shape), (np.float32, (2, 2)))
        np.testing.assert_array_equal(got, values)
        flat = libmrt.read_onnx_tensor_file(path, libmrt.DataType.F32, (4,))
        np.testing.assert_array_equal(flat, values.ravel())
        out = np.full((1, 4), 9.0, np.float32)
        self.assertIs(libmrt.read_onnx_tensor_file(path, out=out), out)
        np.testing.assert_array_equal(out, values.reshape(1, 4))

    def test_int64_fills_an_int32_tensor_as_the_compiler_narrows_it(self):
        from onnx import TensorProto, helper
        proto = helper.make_tensor("ids", TensorProto.INT64, [3], [7, -1, 100000])
        path = self.write("ids.pb", proto)
        np.testing.assert_array_equal(libmrt.read_onnx_tensor_file(path, np.int32, (3,)),
                                      [7, -1, 100000])
        big = self.write("big.pb", helper.make_tensor("ids", TensorProto.INT64, [3],
                                                      [7, 1 << 40, 100000]))
        out = np.array([7, -1, 100000], np.int32)
        self.assert_refused(libmrt.InvalidArgumentError,
                            f"value {1 << 40} at element 1 does not fit the device's 32-bit",
                            lambda: libmrt.read_onnx_tensor_file(big, out=out))
        np.testing.assert_array_equal(out, [7, -1, 100000])  # unchanged on failure

    def test_refusals_name_the_file_and_the_mismatch(self):
        path = self.write("x.pb", np.array([1, 2, 3, 4], np.float32))
        two = np.full(2, 9.0, np.float32)
        error = self.assert_refused(
            libmrt.InvalidArgumentError,
            f"'{path}': the file holds 4 elements [4], the tensor needs 2",
            lambda: libmrt.read_onnx_tensor_file(path, out=two))
        self.assertEqual(error.status, libmrt.Status.INVALID_ARGUMENT)
        np.testing.assert_array_equal(two, [9.0, 9.0])
        self.assert_refused(libmrt.InvalidArgumentError, "the file holds FLOAT, the tensor is S32",
                            lambda: libmrt.read_onnx_tensor_file(path, np.int32, (4,)))
        junk = os.path.join(self.directory.name, "junk.pb")
        with open(junk, "wb") as f:
            f.write(b"\xff\xff\xff not protobuf")
        self.assert_refused(libmrt.InvalidArgumentError, "not an ONNX TensorProto",
                            lambda: libmrt.read_onnx_tensor_file(junk, np.float32, (4,)))
        missing = os.path.join(self.directory.name, "missing.pb")
        error = self.assert_refused(libmrt.NotFoundError, f"'{missing}': no such file",
                                    lambda: libmrt.read_onnx_tensor_file(missing, np.float32, (4,)))
        self.assertEqual(error.code, libmrt.Status.NOT_FOUND)
        self.assert_refused(libmrt.InvalidArgumentError, "not a regular file",
                            lambda: libmrt.read_onnx_tensor_file(self.directory.name, np.float32,
                                                                 (4,)))
        # The package's own checks, before the library is called.
        self.assert_refused(libmrt.InvalidArgumentError, "give dtype and shape, or out",
                            lambda: libmrt.read_onnx_tensor_file(path, np.float32))
        self.assert_refused(libmrt.InvalidArgumentError, "no mrt data type",
                            lambda: libmrt.read_onnx_tensor_file(path, np.complex64, (4,)))
        read_only = np.zeros(4, np.float32)
        read_only.flags.writeable = False
        self.assert_refused(libmrt.InvalidArgumentError, "read-only",
                            lambda: libmrt.read_onnx_tensor_file(path, out=read_only))
        strided = np.zeros(8, np.float32)[::2]
        self.assert_refused(libmrt.InvalidArgumentError, "C-contiguous",
                            lambda: libmrt.read_onnx_tensor_file(path, out=strided))
        self.assert_refused(libmrt.InvalidArgumentError, "out has shape (4,), shape is (2, 2)",
                            lambda: libmrt.read_onnx_tensor_file(path, shape=(2, 2),
                                                                 out=np.zeros(4, np.float32)))


@unittest.skipIf(onnx is None, "needs the onnx package")
class OnnxIoTilesAndPipelinesTest(unittest.TestCase):
    """y = softmax(relu(x @ w1 + b1) @ w2 + b2) (Gemm, Relu, Gemm, Softmax)."""

    @classmethod
    def setUpClass(cls):
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(3)
        cls.w1 = rng.standard_normal((16, 32)).astype(np.float32) * 0.3
        cls.b1 = rng.standard_normal(32).astype(np.float32) * 0.1
        cls.w2 = rng.standard_normal((32, 10)).astype(np.float32) * 0.3
        cls.b2 = rng.standard_normal(10).astype(np.float32) * 0.1
        graph = helper.make_graph(
            [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["z"]),
             helper.make_node("Softmax", ["z"], ["y"], axis=1)],
            "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])],
            [numpy_helper.from_array(cls.w1, "w1"), numpy_helper.from_array(cls.b1, "b1"),
             numpy_helper.from_array(cls.w2, "w2"), numpy_helper.from_array(cls.b2, "b2")])
        cls.onnx_bytes = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
        cls.x = np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16)
        z = np.maximum(cls.x @ cls.w1 + cls.b1, 0) @ cls.w2 + cls.b2
        exps = np.exp(z - z.max(axis=1, keepdims=True))
        cls.want = exps / exps.sum(axis=1, keepdims=True)

    def serve(self, model):
        with model, libmrt.ModelRunner(model) as runner:
            return runner.execute({"x": self.x})["y"].copy()

    def test_io_tiles_are_recorded_with_the_same_outputs(self):
        model = libmrt.compile_onnx(self.onnx_bytes, batch_size=8, num_io_tiles=2)
        self.assertEqual(model.options()["exchange.numIOTiles"], "2")
        np.testing.assert_allclose(self.serve(model), self.want, rtol=1e-4, atol=1e-6)
        plain = libmrt.compile_onnx(self.onnx_bytes, batch_size=8)
        self.assertNotIn("exchange.numIOTiles", plain.options())
        np.testing.assert_allclose(self.serve(plain), self.want, rtol=1e-4, atol=1e-6)

    def test_io_tiles_leaving_no_compute_tile_are_refused(self):
        with self.assertRaises(libmrt.InvalidArgumentError) as caught:
            libmrt.compile_onnx(self.onnx_bytes, num_io_tiles=1472)
        self.assertEqual(caught.exception.status, libmrt.Status.INVALID_ARGUMENT)
        self.assertIn("num_io_tiles is 1472; it must leave compute tiles: the IPUs of GC200 have "
                      "1472 tiles", caught.exception.message)
        with self.assertRaises(libmrt.InvalidArgumentError) as caught:
            libmrt.compile_onnx(self.onnx_bytes, target=libmrt.Target("ipu-model-small"),
                                num_io_tiles=4)
        self.assertIn("num_io_tiles is 4; it must leave compute tiles: the IPUs of IPU-Model "
                      "small have 4 tiles", caught.exception.message)

    def test_two_ipus_split_the_layers_into_a_pipeline_with_the_same_outputs(self):
        outputs = []
        for ipus in (1, 2):
            model = libmrt.compile_onnx(self.onnx_bytes, batch_size=8, num_ipus=ipus)
            main = model.program_flow(libmrt.Phase.MAIN)[0]
            with model.executable() as executable:
                pipeline = executable.pipeline(main)
            self.assertEqual(pipeline.num_stages, ipus)
            if ipus == 2:
                self.assertLess(pipeline.interval_cycles, pipeline.latency_cycles)
            else:
                self.assertEqual(pipeline.interval_cycles, pipeline.latency_cycles)
            outputs.append(self.serve(model))
        np.testing.assert_allclose(outputs[0], self.want, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-5, atol=1e-7)


if __name__ == "__main__":
    unittest.main()

"""compile_onnx on a model made here with the onnx package."""
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
        with libmrt.ModelRunner(model) as runner:
            return runner.execute({"x": x})["y"].copy()

    def test_compile_from_bytes_and_file_with_batch_and_shapes(self):
        x = np.linspace(-1, 1, 4 * 6, dtype=np.float32).reshape(4, 6)
        want = np.maximum(x @ self.w + self.b, 0)
        steps = []
        model = libmrt.compile_onnx(self.onnx_bytes, batch_size=4,
                                 progress=lambda step, total: steps.append((step, total)))
        np.testing.assert_allclose(self.run_model(model, x), want, rtol=1e-5, atol=1e-6)
        self.assertTrue(steps and steps[-1][0] == steps[-1][1], steps)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "dense.onnx")
            with open(path, "wb") as f:
                f.write(self.onnx_bytes)
            model = libmrt.compile_onnx(path, input_shapes={"x": [2, 6]}, precision="f16")
        self.assertEqual(model.anchor("x").shape, (2, 6))
        np.testing.assert_allclose(self.run_model(model, x[:2]), want[:2], rtol=1e-2, atol=1e-2)

    def test_recorded_batching_dim_lets_the_runner_take_several_batches(self):
        x = np.linspace(-1, 1, 8 * 6, dtype=np.float32).reshape(8, 6)
        model = libmrt.compile_onnx(self.onnx_bytes, batch_size=4, batching_dim=0)
        self.assertEqual(model.batching_dim, 0)  # recorded in the model
        self.assertIsNone(libmrt.compile_onnx(self.onnx_bytes, batch_size=4).batching_dim)
        # Two batches of 4 in one request: only a runner batching along
        # dimension 0 (the model's own, none set in its config) accepts (8, 6).
        np.testing.assert_allclose(self.run_model(model, x), np.maximum(x @ self.w + self.b, 0),
                                   rtol=1e-5, atol=1e-6)
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.compile_onnx(self.onnx_bytes, batching_dim=2)
        self.assertEqual(caught.exception.status, libmrt.Status.INVALID_ARGUMENT)
        self.assertIn("batching_dim 2", str(caught.exception))

    def test_errors_carry_status_and_message(self):
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.compile_onnx(self.onnx_bytes, input_shapes={"w": [6, 3]})
        self.assertEqual(caught.exception.status, libmrt.Status.INVALID_ARGUMENT)
        self.assertIn("'w', which is not an input", str(caught.exception))
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.compile_onnx(self.onnx_bytes[:40])
        self.assertEqual(caught.exception.status, libmrt.Status.CORRUPT_MODEL)
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.compile_onnx("/nonexistent/model.onnx")
        self.assertEqual(caught.exception.status, libmrt.Status.NOT_FOUND)
        with self.assertRaises(libmrt.MrtError) as caught:
            libmrt.compile_onnx(self.onnx_bytes, precision="f8")
        self.assertEqual(caught.exception.status, libmrt.Status.INVALID_ARGUMENT)


# The repository's copy of mnist-8 (the C API's tests compile it too).
MNIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "data",
                     "onnx", "mnist-8", "model.onnx")


@unittest.skipUnless(os.path.exists(MNIST), "needs the repository's tests/data/onnx/mnist-8")
class RecordedBatchingDimTest(unittest.TestCase):
    """Model.batching_dim: what compile_onnx records (mrt_model_batching_dim)."""

    def test_a_compiled_model_records_its_batching_dim(self):
        with libmrt.compile_onnx(MNIST, batching_dim=0) as model:
            self.assertEqual(model.batching_dim, 0)
        with libmrt.compile_onnx(MNIST) as model:
            self.assertIsNone(model.batching_dim)


if __name__ == "__main__":
    unittest.main()

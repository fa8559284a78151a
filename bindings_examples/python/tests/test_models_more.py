"""Model.with_engine_options and fuse_models (mrt_model_with_engine_options,
mrt_model_fuse), as the C and C++ tests use them: the options a new model
carries, the models of a fused file served at the same time on one device,
and every refusal as an MrtError with the library's status and message."""
import os
import tempfile
import threading
import unittest

import numpy as np

import libmrt
from support import (MODEL, REPLICATED_MODEL, MrtTestCase, deterministic_image, needs_model,
                     needs_replicated_model, reference_probs)


def scale_model(name="scale", target="gc200", tiles=2):
    """y = x * w on `tiles` tiles, w TensorData loaded by the Load program:
    a small model of its own to fuse with the mlp."""
    scale = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
    with libmrt.Graph(libmrt.Target(target)) as g:
        x = g.create_tensor(np.float32, (4,), "x", 0, tiles)
        w = g.create_tensor(np.float32, (4,), "w", 0, tiles)
        load, main = g.sequence(name="load"), g.sequence(name="main")
        g.sequence_add(load, g.copy_from_stream(g.add_host_to_device_fifo("w", np.float32, 4), w))
        g.sequence_add(main, g.copy_from_stream(g.add_host_to_device_fifo("x", np.float32, 4), x))
        y = g.binary(main, "Mul", x, w, "y")
        g.sequence_add(main, g.copy_to_stream(y, g.add_device_to_host_fifo("y", np.float32, 4)))
        executable = g.compile([load, main])
    with executable, libmrt.ModelBuilder(name, executable) as builder:
        builder.set_program_flow(libmrt.Phase.LOAD, [0])
        builder.set_program_flow(libmrt.Phase.MAIN, [1])
        builder.add_anchor("w", (4,), [0], data_source=libmrt.DataSource.TENSOR_DATA)
        builder.add_tensor_data("w", scale)
        builder.add_anchor("x", (1, 4), [1])
        builder.add_anchor("y", (1, 4), [1])
        return builder.build(), scale


@needs_model
class EngineOptionsTest(MrtTestCase):
    """A model with engine options set over its own: a new model, the
    original unchanged, blobs shared; the refusals name the option."""

    @classmethod
    def setUpClass(cls):
        cls.model = libmrt.Model(MODEL)

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def test_overrides_make_a_new_model(self):
        before = self.model.options()
        with tempfile.TemporaryDirectory() as directory:
            profiled = self.model.with_engine_options(
                {"autoReport.all": True, "autoReport.directory": directory})
            expected = dict(before, **{"autoReport.all": "true", "autoReport.directory": directory})
            self.assertEqual(profiled.options(), expected)
            self.assertEqual(sorted(profiled.options()), sorted(expected))  # key order
            self.assertEqual(self.model.options(), before, "the original model is unchanged")
            self.assertEqual(profiled.info().executable, "mlp")
            self.assertEqual(profiled.executable_bytes(), self.model.executable_bytes())
            # A later value of a key replaces the earlier one; pairs work too.
            quiet = profiled.with_engine_options([("autoReport.all", "false")])
            self.assertEqual(quiet.options()["autoReport.all"], "false")
            self.assertEqual(quiet.options()["autoReport.directory"], directory)
            self.assertEqual(profiled.options()["autoReport.all"], "true")
            # No options: a copy with the same options.
            self.assertEqual(self.model.with_engine_options({}).options(), before)
            self.assertEqual(self.model.with_engine_options([]).options(), before)
            # The new model serves requests like the original.
            image = deterministic_image()
            with libmrt.ModelRunner(quiet) as runner:
                probs = runner.execute({"image": image})["probs"]
            np.testing.assert_allclose(probs, reference_probs(self.model, image),
                                       rtol=1e-5, atol=1e-7)
            for model in (profiled, quiet):
                model.close()

    def test_refusals_name_the_option(self):
        self.assert_error(libmrt.InvalidArgumentError, "engine option 'no.such.option' = '1'",
                          lambda: self.model.with_engine_options({"no.such.option": 1}))
        self.assert_error(libmrt.InvalidArgumentError, "engine option 'autoReport.all' = 'maybe'",
                          lambda: self.model.with_engine_options({"autoReport.all": "maybe"}))
        self.assert_error(libmrt.InvalidArgumentError,
                          "options[2]: engine option 'autoReport.all' is given twice",
                          lambda: self.model.with_engine_options(
                              [("autoReport.all", "true"), ("autoReport.all", "false")]))
        self.assert_error(libmrt.InvalidArgumentError, "is not a (key, value) pair",
                          lambda: self.model.with_engine_options([("autoReport.all",)]))
        self.assert_error(libmrt.InvalidArgumentError, "got a string",
                          lambda: self.model.with_engine_options("autoReport.all"))
        closed = libmrt.Model(MODEL)
        closed.close()
        self.assert_error(libmrt.FailedPreconditionError, "closed",
                          lambda: closed.with_engine_options({}))


def served(runner_or_session):
    """The name of the model a runner or session serves."""
    with runner_or_session.model() as model:
        return model.info().executable


@needs_model
class FusionTest(MrtTestCase):
    """The mlp and a model built here fused into one PopEF file: each
    loaded by name, both served at the same time on one device, each from
    its own thread, every output checked; then the refusals."""

    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.directory.name, "fused.popef")
        self.mlp = libmrt.Model(MODEL)
        self.scale, self.weights = scale_model()

    def tearDown(self):
        self.mlp.close()
        self.scale.close()
        self.directory.cleanup()

    def test_fused_file_holds_each_model_under_its_name(self):
        libmrt.fuse_models([self.scale, self.mlp], self.path)
        self.assert_error(libmrt.InvalidArgumentError, "'scale', 'mlp'",
                          lambda: libmrt.Model(self.path))
        for name in ("scale", "mlp"):
            with libmrt.Model(self.path, executable=name) as model:
                self.assertEqual(model.info().executable, name)
                self.assertEqual(model.info().shared_executable, "scale+mlp")
        # Models not fused say so too.
        self.assertEqual(self.mlp.info().shared_executable, "")
        # Anchor names stay the model's; handles (streams) are the model's own.
        with libmrt.Model(self.path, executable="scale") as model:
            self.assertEqual(model.anchor("x").handle, "scale/x")
            np.testing.assert_array_equal(model.tensor_data("w"), self.weights)
        self.assert_error(libmrt.NotFoundError, "",
                          lambda: libmrt.Model(self.path, executable="resnet"))

    def test_fused_models_are_served_at_once_on_one_device(self):
        libmrt.fuse_models((self.scale, self.mlp), self.path)
        with libmrt.DeviceManager() as manager:
            device = manager.get_device(1)
        mlp = libmrt.Model(self.path, executable="mlp")
        scale = libmrt.Model(self.path, executable="scale")
        runners = [libmrt.ModelRunner(mlp, devices=[device]),
                   libmrt.ModelRunner(scale, devices=[device])]
        device.close()  # the runners keep it
        failures = []

        def serve_mlp(runner):
            rng = np.random.default_rng(7)
            for _ in range(20):
                image = rng.random((1, 784), dtype=np.float32)
                probs = runner.execute({"image": image})["probs"]
                if not np.allclose(probs, reference_probs(self.mlp, image), rtol=1e-4, atol=1e-6):
                    failures.append(("mlp", probs))

        def serve_scale(runner):
            for i in range(200):
                x = np.array([[i, -i, 0.5 * i, 1.0]], np.float32)
                y = runner.execute({"x": x})["y"]
                if not np.array_equal(y, x * self.weights):
                    failures.append(("scale", x, y))

        threads = [threading.Thread(target=serve, args=(runner,))
                   for serve, runner in zip((serve_mlp, serve_scale), runners)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        for runner in runners:
            runner.close()
        mlp.close()
        scale.close()
        self.assertEqual(failures, [])

    def test_runners_and_sessions_load_a_fused_model_by_name(self):
        libmrt.fuse_models([self.scale, self.mlp], self.path)
        x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
        with libmrt.ModelRunner(self.path, model_name="scale") as runner:
            self.assertEqual(served(runner), "scale")
            np.testing.assert_array_equal(runner.execute({"x": x})["y"], x * self.weights)
        with libmrt.Session(self.path, model_name="mlp") as session:
            self.assertEqual(served(session), "mlp")
        # Given a Model: None or the model's own name.
        with libmrt.Model(self.path, executable="scale") as scale:
            with libmrt.ModelRunner(scale, model_name="scale") as runner:
                self.assertEqual(served(runner), "scale")
            with libmrt.Session(scale, model_name="scale") as session:
                self.assertEqual(served(session), "scale")

    def test_unknown_and_mismatched_model_names_are_refused(self):
        libmrt.fuse_models([self.scale, self.mlp], self.path)
        self.assert_error(libmrt.NotFoundError, "(models: 'scale', 'mlp')",
                          lambda: libmrt.ModelRunner(self.path, model_name="resnet"))
        self.assert_error(libmrt.NotFoundError, "(models: 'scale', 'mlp')",
                          lambda: libmrt.Session(self.path, model_name="resnet"))
        self.assert_error(libmrt.InvalidArgumentError,
                          "the config asks for model 'scale', the model given is 'mlp'",
                          lambda: libmrt.ModelRunner(self.mlp, model_name="scale"))
        self.assert_error(libmrt.InvalidArgumentError, "'scale'",
                          lambda: libmrt.Session(self.mlp, model_name="scale"))
        # Without a name, a fused file's several models are refused.
        self.assert_error(libmrt.InvalidArgumentError, "'scale', 'mlp'",
                          lambda: libmrt.ModelRunner(self.path))

    def test_bad_fusions_name_the_problem_and_write_nothing(self):
        self.assert_error(libmrt.InvalidArgumentError, "two or more",
                          lambda: libmrt.fuse_models([self.mlp], self.path))
        self.assert_error(libmrt.InvalidArgumentError, "two models are named 'mlp'",
                          lambda: libmrt.fuse_models([self.mlp, self.mlp], self.path))
        self.assert_error(libmrt.InvalidArgumentError, "models[1] is a str, not a Model",
                          lambda: libmrt.fuse_models([self.mlp, MODEL], self.path))
        self.assertFalse(os.path.exists(self.path))
        # A fused model cannot be fused again.
        libmrt.fuse_models([self.scale, self.mlp], self.path)
        with libmrt.Model(self.path, executable="mlp") as fused_mlp:
            other, _ = scale_model("other")
            with other:
                again = os.path.join(self.directory.name, "again.popef")
                self.assert_error(libmrt.InvalidArgumentError, "'mlp' is already fused",
                                  lambda: libmrt.fuse_models([fused_mlp, other], again))
                self.assertFalse(os.path.exists(again))
        # Models compiled for different targets cannot share an IPU.
        small, _ = scale_model("small", "ipu-model-small")
        with small:
            mixed = os.path.join(self.directory.name, "mixed.popef")
            self.assert_error(libmrt.InvalidArgumentError, "fused models share one target",
                              lambda: libmrt.fuse_models([small, self.mlp], mixed))
            self.assertFalse(os.path.exists(mixed))

    @needs_replicated_model
    def test_replicated_models_are_refused(self):
        with libmrt.Model(REPLICATED_MODEL) as replicated:
            self.assert_error(libmrt.InvalidArgumentError,
                              "model 'replicated' runs on 1 IPU(s) with replication factor 2; "
                              "only models on one IPU without replication can be fused",
                              lambda: libmrt.fuse_models([replicated, self.mlp], self.path))
        self.assertFalse(os.path.exists(self.path))


if __name__ == "__main__":
    unittest.main()

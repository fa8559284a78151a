"""Graph.matmul_preloaded_rhs (mrt_ops_matmul_preloaded_rhs) and
Executable.pipeline (mrt_executable_pipeline), as tests/c/test_graph_run.c,
test_graph.c and test_executable.c use them: a matmul whose weights the
Load program copies to the tiles that multiply them, run on an IPU Model
device against numpy; programs as pipelines over the IPUs of a replica;
the refusals as MrtError with the library's status and message."""
import unittest

import numpy as np

import libmrt
from support import MODEL, MrtTestCase, needs_model


def small_graph(num_ipus=1):
    return libmrt.Graph(libmrt.Target("ipu-model-small", num_ipus=num_ipus))


class MatmulPreloadedRhsTest(MrtTestCase):
    M, K, N = 96, 40, 8

    def test_weights_loaded_once_multiply_every_main_run(self):
        M, K, N = self.M, self.K, self.N
        with small_graph() as g:
            a = g.create_matmul_input(libmrt.MatmulOperand.LHS_OF_PRELOADED, np.float32, (M, K),
                                      (K, N), "a")
            b = g.create_matmul_input(libmrt.MatmulOperand.RHS_PRELOADED, np.float32, (M, K),
                                      (K, N), "b")
            g.create_host_write("a", a)
            g.create_host_write("b", b)
            load, main = g.sequence(name="load"), g.sequence(name="main")
            mm = g.matmul_preloaded_rhs(main, load, a, b, name="mm")
            self.assertEqual(g.tensor_info(mm).shape, (M, N))
            self.assertEqual(g.tensor_info(mm).dtype, np.float32)
            g.create_host_read("mm", mm)
            executable = g.compile([load, main])
        rng = np.random.default_rng(11)
        hb = rng.uniform(-1, 1, (K, N)).astype(np.float32)
        with executable, libmrt.DeviceManager() as manager, \
                manager.create_small_ipu_model_device() as device, \
                libmrt.Engine(executable) as engine:
            engine.load(device)
            engine.write_tensor("b", hb)
            engine.run(0)
            for _ in range(2):
                ha = rng.uniform(-1, 1, (M, K)).astype(np.float32)
                engine.write_tensor("a", ha)
                engine.run(1)
                np.testing.assert_allclose(engine.read_tensor("mm").reshape(M, N), ha @ hb,
                                           rtol=1e-4, atol=1e-4)

    def test_bad_load_sequences_are_refused(self):
        with small_graph() as g:
            seq = g.sequence(name="s")
            notseq = g.sync(libmrt.SyncType.INTERNAL, "sync")
            a = g.create_tensor(np.float32, (4, 8), "a")
            b = g.create_tensor(np.float32, (8, 4), "b")
            error = self.assert_error(libmrt.InvalidArgumentError, "load_sequence 0x",
                                      lambda: g.matmul_preloaded_rhs(seq, seq, a, b, name="m"))
            self.assertIn("the matmul's own sequence", error.message)
            error = self.assert_error(libmrt.InvalidArgumentError, "load_sequence 0x",
                                      lambda: g.matmul_preloaded_rhs(seq, notseq, a, b, name="m"))
            self.assertIn("not a Sequence", error.message)
        self.assertEqual(int(libmrt.MatmulOperand.LHS_OF_PRELOADED), 2)
        self.assertEqual(int(libmrt.MatmulOperand.RHS_PRELOADED), 3)


class PipelineTest(MrtTestCase):
    def two_ipu_executable(self):
        """Main: x streamed in and doubled on IPU 0, copied to IPU 1 and
        squared there, streamed out: two stages joined by a copy."""
        with small_graph(num_ipus=2) as g:
            tiles = g.target().tiles_per_ipu
            x = g.create_tensor(np.float32, (64,), "x", 0, tiles)
            y = g.create_tensor(np.float32, (64,), "y", tiles, tiles)
            main = g.sequence(name="main")
            g.sequence_add(main, g.copy_from_stream(g.add_host_to_device_fifo("in", np.float32, 64), x))
            g.binary_in_place(main, "Add", x, x)
            g.sequence_add(main, g.copy(x, y))
            g.binary_in_place(main, "Mul", y, y)
            g.sequence_add(main, g.copy_to_stream(y, g.add_device_to_host_fifo("out", np.float32, 64)))
            return g.compile([main])

    def test_two_ipus_make_a_two_stage_pipeline(self):
        with self.two_ipu_executable() as executable:
            pipeline = executable.pipeline(0)
            self.assertEqual(pipeline.num_stages, 2)
            self.assertGreater(pipeline.interval_cycles, 0)
            self.assertLess(pipeline.interval_cycles, pipeline.latency_cycles)
            self.assert_error(libmrt.InvalidArgumentError, "program index 1 out of range",
                              lambda: executable.pipeline(1))

    @needs_model
    def test_a_one_ipu_program_is_one_stage(self):
        with libmrt.Model(MODEL) as model, model.executable() as executable:
            main = model.program_flow(libmrt.Phase.MAIN)[0]
            pipeline = executable.pipeline(main)
            self.assertEqual(pipeline.num_stages, 1)
            self.assertGreater(pipeline.latency_cycles, 0)
            self.assertEqual(pipeline.interval_cycles, pipeline.latency_cycles)
            self.assertEqual(pipeline, libmrt.PipelineInfo(1, pipeline.latency_cycles,
                                                           pipeline.latency_cycles))
            count = executable.info().num_programs
            self.assert_error(libmrt.InvalidArgumentError, f"program index {count} out of range",
                              lambda: executable.pipeline(count))
        self.assert_error(libmrt.FailedPreconditionError, "closed", lambda: executable.pipeline(0))


if __name__ == "__main__":
    unittest.main()

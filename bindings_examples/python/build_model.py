#!/usr/bin/python3
"""build_model.py: bindings_examples/c/build_model.c in Python.

    python3 build_model.py OUT.popef

Builds a two-layer MLP  y = softmax(relu(x.w1 + b1).w2 + b2)  for one GC200
with libmrt.Graph and its ops, compiles it, writes it as a PopEF model (weights
as TensorData), then serves the file with a ModelRunner and compares the
outputs with numpy. Prints "build_model.py: ok" when they match.
"""
import sys

import numpy as np

import libmrt

BATCH, IN, HIDDEN, OUT = 2, 16, 32, 4


def fill(count, seed, scale):
    """build_model.c's deterministic values in [-scale, scale)."""
    values = np.empty(count, np.float32)
    for i in range(count):
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        values[i] = scale * (((seed >> 8) & 0xFFFF) / 32768.0 - 1.0)
    return values


WEIGHTS = {"w1": fill(IN * HIDDEN, 1, 0.5).reshape(IN, HIDDEN), "b1": fill(HIDDEN, 2, 0.1),
           "w2": fill(HIDDEN * OUT, 3, 0.5).reshape(HIDDEN, OUT), "b2": fill(OUT, 4, 0.1)}


def build():
    """The model, in memory: graph, executable, then PopEF metadata."""
    f32, LHS, RHS = libmrt.DataType.F32, libmrt.MatmulOperand.LHS, libmrt.MatmulOperand.RHS
    with libmrt.Graph(libmrt.Target("gc200")) as g:
        # Laid out as the matmuls want them: a Main run moves only activations.
        x = g.create_matmul_input(LHS, f32, (BATCH, IN), (IN, HIDDEN), "x")
        tensors = {"w1": g.create_matmul_input(RHS, f32, (BATCH, IN), (IN, HIDDEN), "w1"),
                   "w2": g.create_matmul_input(RHS, f32, (BATCH, HIDDEN), (HIDDEN, OUT), "w2"),
                   "b1": g.create_tensor(f32, (HIDDEN,), "b1"),
                   "b2": g.create_tensor(f32, (OUT,), "b2")}
        load, main = g.sequence(name="load"), g.sequence(name="main")
        for name, tensor in {**tensors, "x": x}.items():   # host FIFOs in
            stream = g.add_host_to_device_fifo(name, f32, g.tensor_info(tensor).num_elements)
            g.sequence_add(main if name == "x" else load, g.copy_from_stream(stream, tensor))

        h = g.matmul(main, x, tensors["w1"], name="layer1")
        h = g.unary(main, "Relu", g.binary(main, "Add", h, tensors["b1"], "bias1"), name="relu")
        o = g.matmul(main, h, tensors["w2"], name="layer2")
        g.binary_in_place(main, "Add", o, tensors["b2"])
        y = g.softmax(main, o, "probs")
        g.sequence_add(main, g.copy_to_stream(y, g.add_device_to_host_fifo("y", f32, BATCH * OUT)))
        executable = g.compile([load, main])   # program 0 is Load, 1 Main

    with executable:
        info = executable.info()
        cycles = sum(step.modelled_cycles for step in executable.steps())
        print(f"compiled: {info.num_programs} programs, {info.num_steps} steps, "
              f"{info.total_memory_bytes} bytes on {info.num_tiles} tiles (fullest tile "
              f"{info.max_memory_tile}: {info.max_tile_memory_bytes} bytes), {cycles} modelled "
              "cycles for one run of every step")
        with libmrt.ModelBuilder("tiny_mlp", executable) as builder:
            builder.set_program_flow(libmrt.Phase.LOAD, [0])
            builder.set_program_flow(libmrt.Phase.MAIN, [1])
            for name, value in WEIGHTS.items():
                builder.add_anchor(name, value.shape, [0], data_source=libmrt.DataSource.TENSOR_DATA)
                builder.add_tensor_data(name, value)
            builder.add_anchor("x", (BATCH, IN), [1])
            builder.add_anchor("y", (BATCH, OUT), [1])
            return builder.build()


def reference(x):
    """y = softmax(relu(x.w1 + b1).w2 + b2) in double precision."""
    w = {name: value.astype(np.float64) for name, value in WEIGHTS.items()}
    logits = np.maximum(x @ w["w1"] + w["b1"], 0) @ w["w2"] + w["b2"]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: build_model.py OUT.popef")
    path = sys.argv[1]
    with build() as model:
        model.write(path)
    print(f"wrote {path}")

    with libmrt.ModelRunner(path) as runner:   # served from the file, as any model
        for round_ in range(3):
            x = fill(BATCH * IN, 100 + round_, 2.0).reshape(BATCH, IN)
            y = runner.execute({"x": x})["y"]
            np.testing.assert_allclose(y, reference(x), rtol=0, atol=1e-5)
            print(f"request {round_}: y[0] = {np.array2string(y[0], precision=4)} "
                  "matches the reference")
    print("build_model.py: ok")


if __name__ == "__main__":
    main()

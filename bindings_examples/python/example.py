#!/usr/bin/python3
"""Runs the mlp example model through the libmrt Python package: load the model,
create a runner, execute synchronously and asynchronously on a deterministic
image, and check both against softmax(relu(image.w1 + b1).w2 + b2) computed
in numpy from the model's own TensorData.

    example.py [MODEL.popef] [--check-errors]

MODEL defaults to $MRT_TEST_MODEL. --check-errors also shows that misuse
(a wrong tensor name, size or dtype, use after close) raises libmrt.MrtError with
the status code and the library's message instead of crashing.
Exits nonzero on any mismatch.
"""
import argparse
import os
import sys

import numpy as np

import libmrt

RELATIVE_TOLERANCE = 1e-5
ABSOLUTE_TOLERANCE = 1e-7


def deterministic_image():
    """A fixed pseudo-image in [0, 1): the same on every run and machine."""
    pixels = np.arange(784, dtype=np.int64)
    return (((pixels * 37 + 11) % 256) / 256.0).astype(np.float32).reshape(1, 784)


def reference_probs(model, image):
    """The mlp's math in float64 on the model's TensorData."""
    w1, b1 = model.tensor_data("w1").astype(np.float64), model.tensor_data("b1")
    w2, b2 = model.tensor_data("w2").astype(np.float64), model.tensor_data("b2")
    hidden = np.maximum(image.astype(np.float64) @ w1 + b1, 0.0)
    logits = hidden @ w2 + b2
    exps = np.exp(logits - logits.max())
    return exps / exps.sum()


def matches(probs, expected):
    return (int(np.argmax(probs)) == int(np.argmax(expected))
            and np.allclose(probs, expected, rtol=RELATIVE_TOLERANCE, atol=ABSOLUTE_TOLERANCE))


def run(model_path):
    image = deterministic_image()
    with libmrt.Model(model_path) as model, libmrt.ModelRunner(model) as runner:
        expected = reference_probs(model, image)

        probs = np.empty((1, 10), np.float32)  # written in place by the library
        runner.execute({"image": image}, {"probs": probs})

        async_probs = np.empty((1, 10), np.float32)
        with runner.execute_async({"image": image}, {"probs": async_probs}) as future:
            future.result()

    top = int(np.argmax(expected))
    ok = True
    for label, got in (("sync", probs), ("async", async_probs)):
        if not matches(got, expected):
            print(f"mlp: {label} result differs from the reference\n  got      {got.ravel()}\n"
                  f"  expected {expected.ravel()}", file=sys.stderr)
            ok = False
    if ok:
        print(f"mlp: argmax {top} p={float(probs[0, top]):.4f} "
              "(sync and async match the reference)")
    return ok


def expect_error(what, code, action):
    """Runs action, which must raise MrtError with `code`; prints it."""
    try:
        action()
    except libmrt.MrtError as error:
        if error.code != code:
            print(f"  {what}: expected {code.name}, got {error}", file=sys.stderr)
            return False
        print(f"  {what}: {error}")
        return True
    print(f"  {what}: no error raised", file=sys.stderr)
    return False


def check_errors(model_path):
    print("misuse raises libmrt.MrtError(code, message):")
    image = deterministic_image()
    probs = np.empty((1, 10), np.float32)
    results = []
    with libmrt.Model(model_path) as model, libmrt.ModelRunner(model) as runner:
        results.append(expect_error(
            "unknown tensor name", libmrt.Status.NOT_FOUND,
            lambda: runner.execute({"image": image, "imagee": image}, {"probs": probs})))
        results.append(expect_error(
            "misspelt input", libmrt.Status.NOT_FOUND,
            lambda: runner.execute({"imagee": image}, {"probs": probs})))
        results.append(expect_error(
            "wrong shape", libmrt.Status.INVALID_ARGUMENT,
            lambda: runner.execute({"image": image[:, :700].copy()}, {"probs": probs})))
        results.append(expect_error(
            "wrong dtype", libmrt.Status.INVALID_ARGUMENT,
            lambda: runner.execute({"image": image.astype(np.float64)}, {"probs": probs})))
        results.append(expect_error(
            "replica out of range", libmrt.Status.INVALID_ARGUMENT,
            lambda: runner.execute({"image": image}, {"probs": probs}, replica=3)))
        results.append(expect_error(
            "unknown TensorData", libmrt.Status.NOT_FOUND, lambda: model.tensor_data("w3")))
        # Still serving after the bad requests.
        runner.execute({"image": image}, {"probs": probs})
        results.append(matches(probs, reference_probs(model, image)))
    results.append(expect_error("use after close", libmrt.Status.FAILED_PRECONDITION,
                                lambda: runner.execute({"image": image}, {"probs": probs})))
    results.append(expect_error("model file missing", libmrt.Status.NOT_FOUND,
                                lambda: libmrt.Model(os.path.join(os.path.dirname(model_path),
                                                               "missing.popef"))))
    return all(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=os.environ.get("MRT_TEST_MODEL"))
    parser.add_argument("--check-errors", action="store_true")
    args = parser.parse_args()
    if not args.model:
        parser.error("give the mlp model's path (write one with: mrt-gen mlp -o mlp.popef)")
    print(f"libmrt {libmrt.version()}")
    ok = run(args.model)
    if args.check_errors:
        ok = check_errors(args.model) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

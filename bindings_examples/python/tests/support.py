"""Shared by the test modules: the mlp model under test and its numpy
reference, waiting helpers, and collecting callback errors.

The suite runs against whichever libmrt package `import libmrt` finds (in
ctest: the one pip installed into a fresh venv) with MRT_TEST_MODEL naming
the mlp example model (mrt-gen mlp -o mlp.popef) and MRT_TEST_REPLICATED_MODEL
the replicated one (mrt-gen replicated -o replicated.popef).
"""
import os
import threading
import time
import unittest

import numpy as np

import libmrt

MODEL = os.environ.get("MRT_TEST_MODEL", "")
needs_model = unittest.skipUnless(MODEL, "MRT_TEST_MODEL must name the mlp model")
# add_one (x, y: float32 [1, 16]) compiled with replication factor 2
# (mrt-gen replicated -o replicated.popef).
REPLICATED_MODEL = os.environ.get("MRT_TEST_REPLICATED_MODEL", "")
needs_replicated_model = unittest.skipUnless(
    REPLICATED_MODEL, "MRT_TEST_REPLICATED_MODEL must name the replicated model")


def deterministic_image():
    """A fixed pseudo-image in [0, 1): the same on every run and machine."""
    pixels = np.arange(784, dtype=np.int64)
    return (((pixels * 37 + 11) % 256) / 256.0).astype(np.float32).reshape(1, 784)


def reference_probs(model, image):
    """The mlp's math, softmax(relu(image.w1 + b1).w2 + b2) per row, in
    float64 on the model's own TensorData."""
    w1, b1 = model.tensor_data("w1").astype(np.float64), model.tensor_data("b1")
    w2, b2 = model.tensor_data("w2").astype(np.float64), model.tensor_data("b2")
    hidden = np.maximum(image.astype(np.float64) @ w1 + b1, 0.0)
    logits = hidden @ w2 + b2
    exps = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)


def wait_until(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


class CallbackErrors:
    """Installs a callback error hook while a test runs, collecting."""

    def __init__(self):
        self.errors = []
        self.lock = threading.Lock()

    def __enter__(self):
        self.saved = libmrt.get_callback_error_hook()
        libmrt.set_callback_error_hook(self.record)
        return self

    def record(self, where, exception):
        with self.lock:
            self.errors.append((where, exception))

    def __exit__(self, *exc_info):
        libmrt.set_callback_error_hook(self.saved)


class MrtTestCase(unittest.TestCase):
    def assert_error(self, error_class, fragment, action):
        """action() raises error_class (an MrtError subclass) whose message
        holds fragment; returns the error."""
        with self.assertRaises(error_class) as caught:
            action()
        error = caught.exception
        self.assertIsInstance(error, libmrt.MrtError)
        self.assertIn(fragment, error.message)
        self.assertIn(fragment, str(error))
        return error

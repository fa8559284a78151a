#!/usr/bin/python3
"""Writes the ONNX test models of tests/onnx/ to OUT_DIR, each as
OUT_DIR/<case>/model.onnx plus test_data_set_0/{input,output}_<i>.pb (the
ONNX Model Zoo layout), the expected outputs computed with numpy.

Usage: make_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(13)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def write(out_dir, case, nodes, inputs, outputs, initializers=(), opset=13):
    """inputs/outputs: lists of (name, array); initializers: (name, array)."""
    graph = helper.make_graph(
        nodes, case,
        [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape) for n, a in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = os.path.join(out_dir, case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out_dir, case, "model.onnx"))
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, array) in enumerate(tensors):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(array, name).SerializeToString())


def mlp(out):
    x, w1, b1, w2, b2 = rand(4, 16), rand(32, 16), rand(32), rand(32, 10), rand(10)
    h = np.maximum(x @ w1.T + b1, 0)
    y = softmax(h @ w2 + 0.5 * b2, 1)
    write(out, "mlp", [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("Gemm", ["hr", "w2", "b2"], ["logits"], beta=0.5),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ], [("x", x)], [("y", y)], [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)])


def broadcast(out):
    a, b, c, d = rand(2, 3, 4), rand(3, 1), rand(4), rand(2, 1, 4, low=0.5, high=2.0)
    k = rand(1, 3, 1)
    write(out, "broadcast", [
        helper.make_node("Add", ["a", "b"], ["add"]),          # [2,3,4] + [3,1]
        helper.make_node("Sub", ["c", "a"], ["sub"]),          # [4] - [2,3,4]
        helper.make_node("Div", ["a", "d"], ["div"]),          # [2,3,4] / [2,1,4]
        helper.make_node("Mul", ["b", "k"], ["mul"]),          # [3,1] * [1,3,1] (constant)
        helper.make_node("Max", ["a", "c"], ["max"]),
        helper.make_node("Sigmoid", ["a"], ["sig"]),
        helper.make_node("LeakyRelu", ["a"], ["leaky"], alpha=0.2),
        helper.make_node("Clip", ["d", "lo", "hi"], ["clip"]),
    ], [("a", a), ("b", b), ("c", c), ("d", d)],
        [("add", a + b), ("sub", c - a), ("div", a / d), ("mul", b * k), ("max", np.maximum(a, c)),
         ("sig", (1 / (1 + np.exp(-a))).astype(np.float32)), ("leaky", np.where(a > 0, a, 0.2 * a).astype(np.float32)),
         ("clip", np.clip(d, 0.75, 1.5))],
        [("k", k), ("lo", np.array(0.75, np.float32)), ("hi", np.array(1.5, np.float32))])


def views(out):
    x, y = rand(2, 3, 4), rand(3, 2)
    t = np.transpose(x, (1, 0, 2)).reshape(3, 8)
    cat = np.concatenate([t, y], axis=1)
    write(out, "views", [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("Concat", ["r", "y"], ["cat"], axis=1),
        helper.make_node("Transpose", ["cat"], ["catT"]),
        helper.make_node("Transpose", ["x"], ["p"], perm=[2, 0, 1]),
        helper.make_node("Softmax", ["x"], ["sm"], axis=1),
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[1], keepdims=1),
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["sl"]),
        helper.make_node("Exp", ["sl"], ["slexp"]),
    ], [("x", x), ("y", y)],
        [("catT", cat.T.copy()), ("p", np.transpose(x, (2, 0, 1)).copy()), ("sm", softmax(x, 1)),
         ("mean", x.mean(axis=1, keepdims=True)), ("slexp", np.exp(x[:, :, 3:0:-2]))],
        [("shape", np.array([3, 8], np.int64)), ("starts", np.array([3], np.int64)),
         ("ends", np.array([0], np.int64)), ("axes", np.array([2], np.int64)), ("steps", np.array([-2], np.int64))])


def shape_fold(out):
    x, w = rand(2, 3, 4), rand(12, 5)
    write(out, "shape_fold", [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["newshape"], axis=0),
        helper.make_node("Reshape", ["x", "newshape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"]),
    ], [("x", x)], [("y", x.reshape(2, 12) @ w)],
        [("w", w), ("zero", np.array(0, np.int64)), ("axes0", np.array([0], np.int64)),
         ("minus1", np.array([-1], np.int64))])


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i:i + kh, j:j + kw].reshape(n, -1)
            y[:, :, i, j] = patch @ w.reshape(m, -1).T
    return y + b.reshape(1, m, 1, 1)


def pool(x, k, op):
    n, c, h, w = x.shape
    return op(x.reshape(n, c, h // k, k, w // k, k), axis=(3, 5))


def lenet(out):
    x = rand(2, 1, 12, 12)
    w1, b1, w2, b2 = rand(4, 1, 3, 3), rand(4), rand(8, 4, 3, 3), rand(8)
    gamma, beta, mean, var = rand(4), rand(4), rand(4), rand(4, low=0.5, high=1.5)
    wf, bf = rand(8 * 2 * 2, 10), rand(10)
    h = conv2d(x, w1, b1, 1)
    h = (h - mean.reshape(1, 4, 1, 1)) / np.sqrt(var.reshape(1, 4, 1, 1) + 1e-5) * gamma.reshape(1, 4, 1, 1) \
        + beta.reshape(1, 4, 1, 1)
    h = pool(np.maximum(h, 0), 2, np.max)           # [2,4,6,6]
    h = pool(conv2d(h, w2, b2, 1), 3, np.mean)      # [2,8,2,2]
    logits = h.reshape(2, -1) @ wf + bf
    y = np.log(softmax(logits, 1))
    write(out, "lenet", [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], auto_pad="SAME_UPPER"),
        helper.make_node("AveragePool", ["c2"], ["p2"], kernel_shape=[3, 3], strides=[3, 3]),
        helper.make_node("Flatten", ["p2"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"]),
        helper.make_node("LogSoftmax", ["logits"], ["y"], axis=1),
    ], [("x", x)], [("y", y.astype(np.float32))],
        [("w1", w1), ("b1", b1), ("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var),
         ("w2", w2), ("b2", b2), ("wf", wf), ("bf", bf)])


def pad_tile(out):
    """Pad's three modes with negative pads (cropping first, as ONNX Runtime
    does), reflect folding past the border, and Tile (of a constant: folded)."""
    x, k = rand(2, 3, 5), rand(1, 3, 1)
    pads = np.array([1, -1, 2, -1, 3, 0], np.int64)    # axis 0: +1/-1, axis 1: -1/+3, axis 2: +2/0
    cropped, widths = x[0:1, 1:, :], ((1, 0), (0, 3), (2, 0))
    write(out, "pad_tile", [
        helper.make_node("Pad", ["x", "pads", "value"], ["constant"], mode="constant"),
        helper.make_node("Pad", ["x", "pads"], ["edge"], mode="edge"),
        helper.make_node("Pad", ["x", "pads"], ["reflect"], mode="reflect"),
        helper.make_node("Tile", ["x", "repeats"], ["tiled"]),
        helper.make_node("Tile", ["k", "k_repeats"], ["k_tiled"]),
        helper.make_node("Add", ["x", "k_tiled"], ["x_plus_k_tiled"]),
    ], [("x", x)],
        [("constant", np.pad(cropped, widths, constant_values=2.5)), ("edge", np.pad(cropped, widths, mode="edge")),
         ("reflect", np.pad(cropped, widths, mode="reflect")), ("tiled", np.tile(x, (2, 1, 3))),
         ("x_plus_k_tiled", x + np.tile(k, (2, 1, 5)))],
        [("pads", pads), ("value", np.array(2.5, np.float32)), ("repeats", np.array([2, 1, 3], np.int64)),
         ("k", k), ("k_repeats", np.array([2, 1, 5], np.int64))])


def conv_transpose(x, w, b, strides, pads, output_padding, group, dilations):
    """ONNX ConvTranspose by scattering each input element times the kernel."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    cg = c // group
    full = [strides[0] * (h - 1) + output_padding[0] + (kh - 1) * dilations[0] + 1,
            strides[1] * (wd - 1) + output_padding[1] + (kw - 1) * dilations[1] + 1]
    y = np.zeros((n, mg * group, *full), np.float64)
    for ci in range(c):
        g = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for e in range(kw):
                        y[:, g * mg:(g + 1) * mg, i * strides[0] + a * dilations[0], j * strides[1] + e * dilations[1]] += \
                            x[:, ci, i, j, None] * w[ci, :, a, e]
    y = y[:, :, pads[0]:full[0] - pads[2], pads[1]:full[1] - pads[3]]
    return (y + b.reshape(1, -1, 1, 1)).astype(np.float32)


def conv_transpose_grouped(out):
    """Two groups, strides, pads, output_padding, dilations and bias; constant
    weights (rearranged on the host) and run-time ones (rearranged by views)."""
    x, w, b = rand(2, 4, 3, 4), rand(4, 3, 2, 3), rand(6)
    attrs = dict(strides=[2, 3], pads=[1, 0, 0, 2], output_padding=[1, 1], group=2, dilations=[1, 2])
    y = conv_transpose(x, w, b, **attrs)
    write(out, "conv_transpose_grouped", [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs),
        helper.make_node("ConvTranspose", ["x", "w_run_time", "b"], ["y_run_time"], **attrs),
    ], [("x", x), ("w_run_time", w)], [("y", y), ("y_run_time", y)], [("w", w), ("b", b)])


def runtime_indices(out):
    """Gather with indices computed at run time (Floor, Cast; negative ones
    count from the end) and ReduceLogSumExp of values whose exp overflows F32."""
    data, sel = rand(4, 5), rand(2, 3, low=-4.0, high=4.0)
    big = data * 200.0
    lse = big.max(axis=1) + np.log(np.exp(big - big.max(axis=1, keepdims=True)).sum(axis=1))
    write(out, "runtime_indices", [
        helper.make_node("Floor", ["sel"], ["sel_floor"]),
        helper.make_node("Cast", ["sel_floor"], ["indices"], to=TensorProto.INT64),
        helper.make_node("Gather", ["data", "indices"], ["picked"], axis=0),
        helper.make_node("Mul", ["data", "scale"], ["big"]),
        helper.make_node("ReduceLogSumExp", ["big"], ["lse"], axes=[1], keepdims=0),
    ], [("data", data), ("sel", sel)],
        [("picked", data[np.floor(sel).astype(np.int64)]), ("lse", lse.astype(np.float32))],
        [("scale", np.array(200.0, dtype=np.float32))])


def where_select(out):
    """Where on run-time values picks, never blends: Log gives -inf and NaN
    where x <= 0, and those must not leak into the elements Where does not
    take from it. The other operand is a broadcast constant row."""
    x = rand(3, 4)
    x[0, 0], x[1, 2] = 0.0, -0.5
    row = rand(4)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(x > 0, np.log(x), row).astype(np.float32)
    write(out, "where_select", [
        helper.make_node("Greater", ["x", "zero"], ["positive"]),
        helper.make_node("Log", ["x"], ["log_x"]),
        helper.make_node("Where", ["positive", "log_x", "row"], ["y"]),
    ], [("x", x)], [("y", y)], [("zero", np.array(0.0, np.float32)), ("row", row)])


def unsupported(out):
    """Two nodes this frontend cannot lower: the error must name both."""
    x = rand(2, 3, 3)
    write(out, "unsupported", [
        helper.make_node("Hardmax", ["x"], ["h"], name="my_hardmax"),
        helper.make_node("Det", ["h"], ["y"], name="my_det"),
    ], [("x", x)], [("y", np.zeros(2, dtype=np.float32))])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_gru(out):
    """An LSTM (with bias) whose sequence feeds a GRU (linear_before_reset),
    whose last state feeds a Gemm: seq 5, input 4, hidden 8. The same seeded
    weights at batch 1 and at batch 8 (cases lstm_gru_b1, lstm_gru_b8)."""
    seq, inp, hid, classes = 5, 4, 8, 3
    lw, lr, lb = rand(1, 4 * hid, inp), rand(1, 4 * hid, hid), rand(1, 8 * hid)
    gw, gr, gb = rand(1, 3 * hid, hid), rand(1, 3 * hid, hid), rand(1, 6 * hid)
    fw, fb = rand(hid, classes), rand(classes)
    for batch in (1, 8):
        x = rand(seq, batch, inp)
        # LSTM, gates i, o, f, c; biases Wb + Rb.
        h, c, ys = np.zeros((batch, hid)), np.zeros((batch, hid)), []
        for t in range(seq):
            g = x[t] @ lw[0].T + h @ lr[0].T + lb[0, :4 * hid] + lb[0, 4 * hid:]
            i, o, f, cand = (g[:, k * hid:(k + 1) * hid] for k in range(4))
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(cand)
            h = sigmoid(o) * np.tanh(c)
            ys.append(h)
        lstm_c = c
        # GRU, gates z, r, h; the reset gate scales H R_h^T + Rb_h.
        h = np.zeros((batch, hid))
        for y in ys:
            xw = y @ gw[0].T + gb[0, :3 * hid]
            hr = h @ gr[0].T + gb[0, 3 * hid:]
            z = sigmoid(xw[:, :hid] + hr[:, :hid])
            r = sigmoid(xw[:, hid:2 * hid] + hr[:, hid:2 * hid])
            cand = np.tanh(xw[:, 2 * hid:] + r * hr[:, 2 * hid:])
            h = (1 - z) * cand + z * h
        logits = h @ fw + fb
        write(out, f"lstm_gru_b{batch}", [
            helper.make_node("LSTM", ["x", "lw", "lr", "lb"], ["lstm_y", "", "lstm_c"], hidden_size=hid),
            helper.make_node("Squeeze", ["lstm_y", "axis1"], ["seq"]),
            helper.make_node("GRU", ["seq", "gw", "gr", "gb"], ["", "gru_h"], hidden_size=hid, linear_before_reset=1),
            helper.make_node("Squeeze", ["gru_h", "axis0"], ["last"]),
            helper.make_node("Gemm", ["last", "fw", "fb"], ["y"]),
        ], [("x", x)], [("y", logits.astype(np.float32)), ("lstm_c", lstm_c[None].astype(np.float32))],
            [("lw", lw), ("lr", lr), ("lb", lb), ("gw", gw), ("gr", gr), ("gb", gb), ("fw", fw), ("fb", fb),
             ("axis0", np.array([0], np.int64)), ("axis1", np.array([1], np.int64))])


def main():
    out = sys.argv[1]
    for make in (mlp, broadcast, views, shape_fold, lenet, pad_tile, conv_transpose_grouped, runtime_indices,
                 where_select, unsupported, lstm_gru):
        make(out)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes the ONNX test models of tests/onnx/ to OUT_DIR, each as
OUT_DIR/<case>/model.onnx plus test_data_set_0/{input,output}_<i>.pb (the
ONNX Model Zoo layout), the expected outputs computed with numpy. The own
models (OWN_MODELS) have a dynamic batch dimension and a data set directory
per batch size, OUT_DIR/<case>/batch_<B>/test_data_set_<i>/; OUT_DIR/
own_models.txt lists them.

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


def write_data_set(data, inputs, outputs):
    """data: a test_data_set_<i> directory; inputs/outputs: (name, array)."""
    os.makedirs(data, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, array) in enumerate(tensors):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(array, name).SerializeToString())


def write_model(out_dir, case, nodes, inputs, outputs, initializers=(), opset=13, batch=None, value_info=()):
    """OUT_DIR/<case>/model.onnx. inputs/outputs: lists of (name, array), whose
    shapes and types the graph declares; initializers: (name, array). batch:
    the symbolic name of every input's and output's first dimension (dynamic:
    set by mrt_onnx_options.batch_size), None for static shapes. value_info:
    (name, element type, shape) declared for intermediate tensors."""
    def info(name, array):
        shape = list(array.shape)
        if batch is not None:
            shape[0] = batch
        return helper.make_tensor_value_info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype], shape)
    graph = helper.make_graph(
        nodes, case, [info(n, a) for n, a in inputs], [info(n, a) for n, a in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers],
        value_info=[helper.make_tensor_value_info(*v) for v in value_info])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out_dir, case), exist_ok=True)
    onnx.save(model, os.path.join(out_dir, case, "model.onnx"))


def write(out_dir, case, nodes, inputs, outputs, initializers=(), opset=13, value_info=()):
    """A static model and its one data set, test_data_set_0."""
    write_model(out_dir, case, nodes, inputs, outputs, initializers, opset, value_info=value_info)
    write_data_set(os.path.join(out_dir, case, "test_data_set_0"), inputs, outputs)


# Own models (issue 13): small networks with seeded weights and a dynamic
# batch dimension "N", each checked against the numpy reference below at
# every batch of BATCHES, with DATA_SETS different inputs per batch:
# OUT_DIR/<case>/model.onnx plus OUT_DIR/<case>/batch_<B>/test_data_set_<i>/.
# A model function returns (nodes, initializers, inputs, reference):
# inputs maps each input name to its shape without the batch dimension, and
# reference(**arrays) returns [(output name, array)], computed in float64.
# Adding a model is one entry of OWN_MODELS (and of kOwnModels in
# onnx_models_test.cpp, which checks that both lists agree).
BATCHES = (1, 8)
DATA_SETS = 2


def write_own(out_dir, case, make):
    nodes, initializers, inputs, reference = make()
    batches = {}
    for batch in BATCHES:
        sets = []
        for _ in range(DATA_SETS):
            arrays = {name: rand(batch, *shape) for name, shape in inputs.items()}
            outputs = [(n, a.astype(np.float32)) for n, a in reference(**arrays)]
            sets.append((list(arrays.items()), outputs))
        batches[batch] = sets
    # Opset 14: the recurrent ops' layout attribute (batch first).
    write_model(out_dir, case, nodes, *batches[BATCHES[0]][0], initializers, opset=14, batch="N")
    for batch, sets in batches.items():
        for i, (ins, outs) in enumerate(sets):
            write_data_set(os.path.join(out_dir, case, f"batch_{batch}", f"test_data_set_{i}"), ins, outs)


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


def conv2d(x, w, b=None, pad=0, stride=1, group=1):
    """NCHW convolution, symmetric padding; w: [M, C/group, kh, kw]."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), x.dtype)
    mg = m // group
    for g in range(group):
        wg = w[g * mg:(g + 1) * mg].reshape(mg, -1)
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh, j * stride:j * stride + kw]
                y[:, g * mg:(g + 1) * mg, i, j] = patch.reshape(n, -1) @ wg.T
    return y if b is None else y + b.reshape(1, m, 1, 1)


def batch_norm(x, gamma, beta, mean, var, eps=1e-5):
    shape = (1, -1, 1, 1)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) + beta.reshape(shape)


def bn_params(c):
    return rand(c, low=0.5, high=1.5), rand(c), rand(c), rand(c, low=0.5, high=1.5)


def f64(*arrays):
    return [a.astype(np.float64) for a in arrays]


def pool(x, k, op):
    n, c, h, w = x.shape
    return op(x.reshape(n, c, h // k, k, w // k, k), axis=(3, 5))


def lenet():
    w1, b1, w2, b2 = rand(4, 1, 3, 3), rand(4), rand(8, 4, 3, 3), rand(8)
    gamma, beta, mean, var = rand(4), rand(4), rand(4), rand(4, low=0.5, high=1.5)
    wf, bf = rand(8 * 2 * 2, 10), rand(10)

    def reference(x):
        h = batch_norm(conv2d(*f64(x, w1, b1), 1), *f64(gamma, beta, mean, var))
        h = pool(np.maximum(h, 0), 2, np.max)                   # [N,4,6,6]
        h = pool(conv2d(h, *f64(w2, b2), 1), 3, np.mean)        # [N,8,2,2]
        logits = h.reshape(len(x), -1) @ wf + bf
        return [("y", np.log(softmax(logits, 1)))]
    return [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], auto_pad="SAME_UPPER"),
        helper.make_node("AveragePool", ["c2"], ["p2"], kernel_shape=[3, 3], strides=[3, 3]),
        helper.make_node("Flatten", ["p2"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"]),
        helper.make_node("LogSoftmax", ["logits"], ["y"], axis=1),
    ], [("w1", w1), ("b1", b1), ("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var),
        ("w2", w2), ("b2", b2), ("wf", wf), ("bf", bf)], {"x": (1, 12, 12)}, reference


def mlp():
    w1, b1, w2, b2 = rand(32, 16), rand(32), rand(32, 10), rand(10)

    def reference(x):
        h = np.maximum(x.astype(np.float64) @ w1.T + b1, 0)
        return [("y", softmax(h @ w2 + 0.5 * b2, 1))]
    return [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("Gemm", ["hr", "w2", "b2"], ["logits"], beta=0.5),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ], [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)], {"x": (16,)}, reference


def resnet_block():
    """Conv-BN-Relu-Conv-BN, the identity skip added, Relu, then
    GlobalAveragePool and a Gemm classifier."""
    c = 8
    w1, w2 = rand(c, c, 3, 3, low=-0.3, high=0.3), rand(c, c, 3, 3, low=-0.3, high=0.3)
    bn1, bn2 = bn_params(c), bn_params(c)
    wf, bf = rand(10, c), rand(10)

    def reference(x):
        x = x.astype(np.float64)
        h = np.maximum(batch_norm(conv2d(x, *f64(w1), pad=1), *f64(*bn1)), 0)
        h = batch_norm(conv2d(h, *f64(w2), pad=1), *f64(*bn2))
        h = np.maximum(h + x, 0)
        return [("y", h.mean(axis=(2, 3)) @ wf.T + bf)]
    names1 = ["bn1_scale", "bn1_b", "bn1_mean", "bn1_var"]
    names2 = ["bn2_scale", "bn2_b", "bn2_mean", "bn2_var"]
    return [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1"] + names1, ["b1"]),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c2"] + names2, ["b2"]),
        helper.make_node("Add", ["b2", "x"], ["skip"]),
        helper.make_node("Relu", ["skip"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ], [("w1", w1), ("w2", w2), *zip(names1, bn1), *zip(names2, bn2), ("wf", wf), ("bf", bf)], \
        {"x": (c, 6, 6)}, reference


def depthwise_block():
    """A depthwise 3x3 Conv (group = channels, stride 2) then a pointwise
    1x1 Conv, BN and Relu (MobileNet's depthwise-separable block)."""
    c, m = 6, 12
    wd, bd, wp = rand(c, 1, 3, 3), rand(c), rand(m, c, 1, 1)
    bn = bn_params(m)

    def reference(x):
        h = conv2d(*f64(x, wd, bd), pad=1, stride=2, group=c)
        h = batch_norm(conv2d(h, *f64(wp)), *f64(*bn))
        return [("y", np.maximum(h, 0))]
    names = ["bn_scale", "bn_b", "bn_mean", "bn_var"]
    return [
        helper.make_node("Conv", ["x", "wd", "bd"], ["dw"], pads=[1, 1, 1, 1], kernel_shape=[3, 3], strides=[2, 2],
                         group=c),
        helper.make_node("Conv", ["dw", "wp"], ["pw"], kernel_shape=[1, 1]),
        helper.make_node("BatchNormalization", ["pw"] + names, ["bn"]),
        helper.make_node("Relu", ["bn"], ["y"]),
    ], [("wd", wd), ("bd", bd), ("wp", wp), *zip(names, bn)], {"x": (c, 8, 8)}, reference


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


def conv3d(x, w, b, strides, pads, group, dilations):
    """ONNX Conv over [N, C, D, H, W]: each kernel offset's strided input
    window times that offset's weights, summed."""
    n, c, *size = x.shape
    m, cg, *kernel = w.shape
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pads[i], pads[i + 3]) for i in range(3)))
    out = [(xp.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(3)]
    y = np.zeros((n, m, *out), np.float64)
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for k in np.ndindex(*kernel):
            window = xs[:, :, k[0] * dilations[0]:, k[1] * dilations[1]:, k[2] * dilations[2]:][
                :, :, :out[0] * strides[0]:strides[0], :out[1] * strides[1]:strides[1], :out[2] * strides[2]:strides[2]]
            y[:, g * mg:(g + 1) * mg] += np.einsum("ncdhw,mc->nmdhw", window, w[g * mg:(g + 1) * mg, :, k[0], k[1], k[2]])
    return (y + b.reshape(1, -1, 1, 1, 1)).astype(np.float32)


def pool3d(x, kernel, strides, pads, average, count_include_pad=0):
    """ONNX MaxPool / AveragePool over [N, C, D, H, W] (floor mode); pads
    are -inf for the max, left out of the average unless count_include_pad."""
    fill = 0.0 if average else -np.inf
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pads[i], pads[i + 3]) for i in range(3)), constant_values=fill)
    valid = np.pad(np.ones_like(x), ((0, 0), (0, 0)) + tuple((pads[i], pads[i + 3]) for i in range(3)))
    out = [(xp.shape[2 + i] - kernel[i]) // strides[i] + 1 for i in range(3)]
    y = np.zeros(x.shape[:2] + tuple(out), np.float32)
    for o in np.ndindex(*out):
        box = tuple(slice(o[i] * strides[i], o[i] * strides[i] + kernel[i]) for i in range(3))
        window = xp[(slice(None), slice(None)) + box]
        if not average:
            y[(slice(None), slice(None)) + o] = window.max(axis=(2, 3, 4))
        else:
            count = np.prod(kernel) if count_include_pad else valid[(slice(None), slice(None)) + box].sum(axis=(2, 3, 4))
            y[(slice(None), slice(None)) + o] = window.sum(axis=(2, 3, 4)) / count
    return y


def conv_pool_3d(out):
    """3-D Conv (two groups, strides, asymmetric pads, dilations, bias;
    constant and run-time weights), MaxPool and AveragePool (with and
    without the pads counted) over [N, C, D, H, W]."""
    x, w, b = rand(2, 4, 5, 6, 7), rand(6, 2, 2, 3, 2), rand(6)
    attrs = dict(strides=[2, 1, 2], pads=[1, 0, 1, 0, 2, 1], group=2, dilations=[1, 2, 1])
    y = conv3d(x, w, b, **attrs)
    pool = dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 1, 0, 0, 1, 1])
    args = (pool["kernel_shape"], pool["strides"], pool["pads"])
    write(out, "conv_pool_3d", [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs),
        helper.make_node("Conv", ["x", "w_run_time", "b"], ["y_run_time"], **attrs),
        helper.make_node("MaxPool", ["x"], ["max"], **pool),
        helper.make_node("AveragePool", ["x"], ["average"], **pool),
        helper.make_node("AveragePool", ["x"], ["average_with_pads"], count_include_pad=1, **pool),
    ], [("x", x), ("w_run_time", w)],
        [("y", y), ("y_run_time", y), ("max", pool3d(x, *args, average=False)),
         ("average", pool3d(x, *args, average=True)),
         ("average_with_pads", pool3d(x, *args, average=True, count_include_pad=1))],
        [("w", w), ("b", b)])


def max_pool_indices(x, kernel, strides, pads, dilations, column_major):
    """ONNX MaxPool (2-D) and its Indices: the flat index into x of each
    window's first maximum in scan order (H and W swapped if column_major)."""
    n, c, h, w = x.shape
    out = [(size + pads[i] + pads[i + 2] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1
           for i, size in enumerate((h, w))]
    y = np.zeros((n, c, *out), np.float32)
    indices = np.zeros((n, c, *out), np.int64)
    for b, ch, i, j in np.ndindex(n, c, *out):
        best = None
        for a, e in np.ndindex(*kernel):
            r, q = i * strides[0] + a * dilations[0] - pads[0], j * strides[1] + e * dilations[1] - pads[1]
            if 0 <= r < h and 0 <= q < w and (best is None or x[b, ch, r, q] > best[0]):
                best = (x[b, ch, r, q], r + q * h if column_major else r * w + q)
        y[b, ch, i, j] = best[0]
        indices[b, ch, i, j] = (b * c + ch) * h * w + best[1]
    return y, indices


def pool_indices(out):
    """MaxPool's Indices output with pads, strides and dilations, row-major
    and column-major (storage_order 1), 2-D and 1-D (the 2-D reference on
    a 1-high x); x has ties, the first one wins."""
    x = np.round(rand(2, 3, 7, 6) * 4) / 4
    x1 = np.round(rand(2, 3, 9) * 4) / 4
    y1, idx1 = max_pool_indices(x1[:, :, None, :], [1, 3], [1, 2], [0, 1, 0, 1], [1, 2], column_major=False)
    attrs = dict(kernel_shape=[2, 3], strides=[2, 1], pads=[1, 1, 0, 1], dilations=[2, 1])
    args = (attrs["kernel_shape"], attrs["strides"], attrs["pads"], attrs["dilations"])
    y, rows = max_pool_indices(x, *args, column_major=False)
    _, cols = max_pool_indices(x, *args, column_major=True)
    # The INT64 indices are compared as FLOAT (exact: below 2^24).
    write(out, "pool_indices", [
        helper.make_node("MaxPool", ["x"], ["y", "rows"], **attrs),
        helper.make_node("MaxPool", ["x"], ["y_cols", "cols"], storage_order=1, **attrs),
        helper.make_node("Cast", ["rows"], ["rows_f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["cols"], ["cols_f"], to=TensorProto.FLOAT),
        helper.make_node("MaxPool", ["x1"], ["y1", "idx1"], kernel_shape=[3], strides=[2], pads=[1, 1], dilations=[2]),
        helper.make_node("Cast", ["idx1"], ["idx1_f"], to=TensorProto.FLOAT),
    ], [("x", x), ("x1", x1)], [("y", y), ("rows_f", rows.astype(np.float32)), ("y_cols", y),
                                ("cols_f", cols.astype(np.float32)), ("y1", y1[:, :, 0, :]),
                                ("idx1_f", idx1[:, :, 0, :].astype(np.float32))])


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


def runtime_shapes(out):
    """Shape operands fed at run time (docs/onnx.md, "Operands computed at
    run time"): the declared output shapes fix Reshape and the ReduceSum's
    axes; CumSum's run-time axis picks its sum on the device."""
    x = rand(2, 3, 4)
    # The test data are FLOAT: the integer operands are cast in the graph.
    shape, axes, axis = (np.array(v, dtype=np.float32) for v in ([6, 4], [1], -1))
    r = x.reshape(6, 4)
    write(out, "runtime_shapes", [
        helper.make_node("Cast", ["shape_f"], ["shape"], to=TensorProto.INT64),
        helper.make_node("Cast", ["axes_f"], ["axes"], to=TensorProto.INT64),
        helper.make_node("Cast", ["axis_f"], ["axis"], to=TensorProto.INT32),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("ReduceSum", ["r", "axes"], ["s"], keepdims=0),
        helper.make_node("CumSum", ["r", "axis"], ["c"]),
    ], [("x", x), ("shape_f", shape), ("axes_f", axes), ("axis_f", axis)],
        [("r", r), ("s", r.sum(axis=1)), ("c", np.cumsum(r, axis=-1).astype(np.float32))])
    # The same Reshape feeding a Relu whose output shape is not declared:
    # nothing fixes the Reshape's result.
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="my_reshape"), helper.make_node("Relu", ["y"], ["z"])],
        "runtime_shape_unknown",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["a", "b"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    os.makedirs(os.path.join(out, "runtime_shape_unknown"), exist_ok=True)
    onnx.save(model, os.path.join(out, "runtime_shape_unknown", "model.onnx"))


def runtime_windows(out):
    """Slice and Pad whose starts, ends, axes, steps, pads and constant_value
    are fed at run time (docs/onnx.md, "Operands computed at run time"):
    negative axes, starts and steps, starts beyond the end, and pads that
    crop one side while padding the other (cropped first, as ONNX Runtime)."""
    x, x2 = rand(5, 6, 4), rand(3, 4)
    starts, ends, axes, steps = ([3, 1, 10], [0, 4, -100], [-1, 0, 1], [-2, 2, -1])
    pads = [2, -1, -1, 3]  # axis 0: 2 before, 1 cropped after; axis 1: 1 cropped before, 3 after
    kept = x2[0:2, 1:4]
    widths = ((2, 0), (0, 3))
    operands = [(name + "_f", np.array(v, dtype=np.float32)) for name, v in
                (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps), ("pads", pads))]
    write(out, "runtime_windows", [
        *[helper.make_node("Cast", [name + "_f"], [name], to=TensorProto.INT64)
          for name in ("starts", "ends", "axes", "steps", "pads")],
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["sliced"]),
        helper.make_node("Pad", ["x2", "pads", "value"], ["constant"], mode="constant"),
        helper.make_node("Pad", ["x2", "pads"], ["edge"], mode="edge"),
        helper.make_node("Pad", ["x2", "pads"], ["reflect"], mode="reflect"),
    ], [("x", x), ("x2", x2), *operands, ("value", np.array(2.5, dtype=np.float32))],
        [("sliced", x[1:4:2, 10:-100:-1, 3:0:-2]),
         ("constant", np.pad(kept, widths, mode="constant", constant_values=2.5)),
         ("edge", np.pad(kept, widths, mode="edge")), ("reflect", np.pad(kept, widths, mode="reflect"))])


def grid_sample(x, grid, mode, padding, align):
    """PyTorch's grid_sampler_2d (what ONNX's GridSample node tests were made with)."""
    n_, c_, h, w = x.shape
    def unnormalize(g, size):
        return (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    def reflect(p, twice_low, twice_high):
        if twice_low == twice_high:
            return 0.0
        low, span = twice_low / 2, (twice_high - twice_low) / 2
        d = abs(p - low)
        extra, flips = np.fmod(d, span), np.floor(d / span)
        return extra + low if flips % 2 == 0 else span - extra + low
    def pad(p, size):
        if padding == "border":
            return min(max(p, 0), size - 1)
        if padding == "reflection":
            r = reflect(p, 0, 2 * (size - 1)) if align else reflect(p, -1, 2 * size - 1)
            return min(max(r, 0), size - 1)
        return p
    def cubic(t, a=-0.75):
        near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1
        far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]
    y = np.zeros((n_, c_) + grid.shape[1:3], dtype=np.float64)
    for n in range(n_):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                px, py = unnormalize(float(grid[n, i, j, 0]), w), unnormalize(float(grid[n, i, j, 1]), h)
                def at(ix, iy):
                    ix, iy = int(ix), int(iy)
                    inside = 0 <= ix < w and 0 <= iy < h
                    return x[n, :, iy, ix].astype(np.float64) if inside else np.zeros(c_)
                if mode == "nearest":
                    y[n, :, i, j] = at(np.rint(pad(px, w)), np.rint(pad(py, h)))
                elif mode == "bilinear":
                    qx, qy = pad(px, w), pad(py, h)
                    x0, y0 = np.floor(qx), np.floor(qy)
                    fx, fy = qx - x0, qy - y0
                    y[n, :, i, j] = (at(x0, y0) * (1 - fx) * (1 - fy) + at(x0 + 1, y0) * fx * (1 - fy) +
                                     at(x0, y0 + 1) * (1 - fx) * fy + at(x0 + 1, y0 + 1) * fx * fy)
                else:
                    x0, y0 = np.floor(px), np.floor(py)
                    wx, wy = cubic(px - x0), cubic(py - y0)
                    y[n, :, i, j] = sum(at(np.floor(pad(x0 - 1 + a, w)), np.floor(pad(y0 - 1 + b, h))) * wx[a] * wy[b]
                                        for a in range(4) for b in range(4))
    return y.astype(np.float32)


def grid_sample_modes(out):
    """GridSample with every mode, padding_mode and align_corners, on a run-time
    grid reaching past the input's border (the node tests try few combinations)."""
    x, grid = rand(2, 3, 4, 5), rand(2, 3, 4, 2, low=-1.4, high=1.4)
    nodes, outputs = [], []
    for mode in ("nearest", "bilinear", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                name = f"{mode}_{padding}_{align}"
                nodes.append(helper.make_node("GridSample", ["x", "grid"], [name], mode=mode, padding_mode=padding,
                                              align_corners=align))
                outputs.append((name, grid_sample(x, grid, mode, padding, align)))
    write(out, "grid_sample_modes", nodes, [("x", x), ("grid", grid)], outputs, opset=16)


def non_max_suppression(boxes, scores, max_per_class, iou_threshold, score_threshold, center_point):
    """ONNX Runtime's greedy NMS: per batch and class, boxes scoring above
    score_threshold best first (lower index on ties), each kept unless its
    IoU with a box kept before exceeds iou_threshold."""
    def corners(box):
        if center_point:
            x, y, w, h = box
            return x - w / 2, y - h / 2, x + w / 2, y + h / 2
        y1, x1, y2, x2 = box
        return min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)
    def iou(a, b):
        (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = corners(a), corners(b)
        area_a, area_b = (ax2 - ax1) * (ay2 - ay1), (bx2 - bx1) * (by2 - by1)
        if area_a <= 0 or area_b <= 0:
            return 0.0
        inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
        return inter / (area_a + area_b - inter)
    selected = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            order = sorted((i for i in range(boxes.shape[1]) if scores[b, c, i] > score_threshold),
                           key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in order:
                if len(kept) < max_per_class and all(iou(boxes[b, i], boxes[b, j]) <= iou_threshold for j in kept):
                    kept.append(i)
            selected += [[b, c, i] for i in kept]
    return np.array(selected, dtype=np.float32)


def nms_formats(out):
    """NonMaxSuppression on overlapping boxes in both box formats, with its
    limit and thresholds fed at run time (declared output shapes)."""
    boxes = np.concatenate([rand(2, 10, 2, low=0.0, high=0.6), rand(2, 10, 2, low=0.3, high=1.0)], axis=2)
    boxes[:, ::3] = boxes[:, ::3, [2, 3, 0, 1]]  # some given by their other two corners
    scores = rand(2, 3, 10, low=0.0, high=1.0)
    limit, iou_threshold, score_threshold = 5, 0.1, 0.2
    corner = non_max_suppression(boxes, scores, limit, iou_threshold, score_threshold, False)
    center = non_max_suppression(boxes, scores, limit, iou_threshold, score_threshold, True)
    operands = ["boxes", "scores", "limit", "iou_threshold", "score_threshold"]
    write(out, "nms_formats", [
        helper.make_node("Cast", ["limit_f"], ["limit"], to=TensorProto.INT64),
        helper.make_node("NonMaxSuppression", operands, ["corner_i"]),
        helper.make_node("NonMaxSuppression", operands, ["center_i"], center_point_box=1),
        helper.make_node("Cast", ["corner_i"], ["corner"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["center_i"], ["center"], to=TensorProto.FLOAT),
    ], [("boxes", boxes), ("scores", scores), ("limit_f", np.array([limit], np.float32)),
        ("iou_threshold", np.array([iou_threshold], np.float32)), ("score_threshold", np.array([score_threshold], np.float32))],
        [("corner", corner), ("center", center)], opset=11,
        value_info=[("corner_i", TensorProto.INT64, corner.shape), ("center_i", TensorProto.INT64, center.shape)])


def resize_reference(x, scales, out_shape, mode, transform, nearest_mode, cubic_a=-0.75, exclude_outside=0):
    """ONNX's reference Resize, axis by axis (the last first), in float64."""
    coordinate = {
        "half_pixel": lambda j, n, s: (j + 0.5) / s - 0.5,
        "pytorch_half_pixel": lambda j, n, s: -0.5 if n * s == 1 else (j + 0.5) / s - 0.5,
        "asymmetric": lambda j, n, s: j / s,
        "tf_half_pixel_for_nn": lambda j, n, s: (j + 0.5) / s,
        "align_corners": lambda j, n, s: 0.0 if n * s == 1 else j * (n - 1) / (n * s - 1),
    }[transform]
    rounds_up = {"round_prefer_floor": lambda f: f > 0.5, "round_prefer_ceil": lambda f: f >= 0.5,
                 "floor": lambda f: False, "ceil": lambda f: f > 0}[nearest_mode]
    def cubic(r, a=cubic_a):
        far = lambda d: ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        near = lambda d: ((a + 2) * d - (a + 3)) * d * d + 1
        return [far(r + 1), near(r), near(1 - r), far(2 - r)]
    y = x.astype(np.float64)
    for axis in reversed(range(x.ndim)):
        n, taken = y.shape[axis], []
        for j in range(out_shape[axis]):
            c = coordinate(j, n, float(scales[axis]))
            below = np.floor(c)
            f = c - below
            if mode == "nearest":
                taken.append(y.take(int(min(max(below + (1 if f > 0 and rounds_up(f) else 0), 0), n - 1)), axis))
                continue
            if f == 0:
                below, f = below - 1, 1.0
            w = [1 - f, f] if mode == "linear" else cubic(f)
            first = int(below) - (len(w) // 2 - 1)
            if exclude_outside:
                w = [wt if 0 <= first + t < n else 0.0 for t, wt in enumerate(w)]
                w = [wt / sum(w) for wt in w]
            taken.append(sum(wt * y.take(min(max(first + t, 0), n - 1), axis) for t, wt in enumerate(w)))
        y = np.stack(taken, axis)
    return y.astype(np.float32)


def resize_runtime_scales(out):
    """Resize with its scales fed at run time, in each mode with the other
    coordinate transforms and nearest modes than the node tests try. The
    scales are chosen so no coordinate lands on a rounding boundary, where
    float32 and float64 could round apart."""
    x, scales = rand(1, 2, 6, 5), np.array([1.0, 1.0, 1.55, 0.7], dtype=np.float32)
    out_shape = (1, 2, 9, 3)
    cases = [("nearest", "half_pixel", "round_prefer_floor", {}), ("nearest", "asymmetric", "round_prefer_ceil", {}),
             ("nearest", "align_corners", "floor", {}), ("nearest", "tf_half_pixel_for_nn", "ceil", {}),
             ("linear", "pytorch_half_pixel", "round_prefer_floor", {}), ("linear", "align_corners", "round_prefer_floor", {}),
             ("cubic", "half_pixel", "round_prefer_floor", {"cubic_coeff_a": -0.5, "exclude_outside": 1}),
             ("cubic", "asymmetric", "round_prefer_floor", {})]
    nodes, outputs = [], []
    for i, (mode, transform, nearest_mode, extra) in enumerate(cases):
        name = f"y{i}_{mode}_{transform}"
        nodes.append(helper.make_node("Resize", ["x", "", "scales"], [name], mode=mode,
                                      coordinate_transformation_mode=transform, nearest_mode=nearest_mode, **extra))
        outputs.append((name, resize_reference(x, scales, out_shape, mode, transform, nearest_mode,
                                               extra.get("cubic_coeff_a", -0.75), extra.get("exclude_outside", 0))))
    write(out, "resize_runtime_scales", nodes, [("x", x), ("scales", scales)], outputs)


def compress_nonzero(out):
    """Compress and NonZero of conditions computed at run time (declared
    output shapes): the kept elements in order, with and without an axis."""
    x = rand(4, 5)
    keep_rows = x[:, 0] > 0
    keep_flat = x.ravel()[:17] > 0.3
    nz = np.array(np.nonzero(x > 0.2)).astype(np.float32)
    write(out, "compress_nonzero", [
        helper.make_node("Slice", ["x", "zero", "one", "one"], ["column"]),
        helper.make_node("Greater", ["column", "zero_f"], ["rows_2d"]),
        helper.make_node("Reshape", ["rows_2d", "minus_one"], ["rows"]),
        helper.make_node("Compress", ["x", "rows"], ["kept_rows"], axis=-2),
        helper.make_node("Reshape", ["x", "minus_one"], ["flat"]),
        helper.make_node("Slice", ["flat", "zero", "seventeen"], ["head"]),
        helper.make_node("Greater", ["head", "threshold"], ["keep"]),
        helper.make_node("Compress", ["x", "keep"], ["kept_flat"]),
        helper.make_node("Greater", ["x", "nz_threshold"], ["positive"]),
        helper.make_node("NonZero", ["positive"], ["nz_i"]),
        helper.make_node("Cast", ["nz_i"], ["nz"], to=TensorProto.FLOAT),
    ], [("x", x)], [("kept_rows", x[keep_rows]), ("kept_flat", x.ravel()[:17][keep_flat]), ("nz", nz)],
        [("zero", np.array([0], np.int64)), ("one", np.array([1], np.int64)), ("seventeen", np.array([17], np.int64)),
         ("minus_one", np.array([-1], np.int64)), ("zero_f", np.array(0.0, np.float32)),
         ("threshold", np.array(0.3, np.float32)), ("nz_threshold", np.array(0.2, np.float32))],
        value_info=[("nz_i", TensorProto.INT64, nz.shape)])


def max_unpool(out):
    """MaxPool's values and Indices through MaxUnpool (batches and channels:
    the indices are flat over the whole tensor), with the unpooled shape and
    with a larger output_shape (zeros after each dimension's end)."""
    x = rand(2, 3, 4, 6)
    windows = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 3, 4)
    pooled = windows.max(axis=-1)
    y = np.where(x == np.repeat(np.repeat(pooled, 2, axis=2), 2, axis=3), x, 0).astype(np.float32)
    bigger = np.zeros((2, 3, 5, 7), np.float32)
    bigger[:, :, :4, :6] = y
    write(out, "max_unpool", [
        helper.make_node("MaxPool", ["x"], ["pooled", "indices"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxUnpool", ["pooled", "indices"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxUnpool", ["pooled", "indices", "shape"], ["bigger"], kernel_shape=[2, 2], strides=[2, 2]),
    ], [("x", x)], [("y", y), ("bigger", bigger)], [("shape", np.array([2, 3, 5, 7], np.int64))], opset=11)


def determinants(out):
    """Det of a batch of 4 x 4 matrices and of one 5 x 5 matrix."""
    a, b = rand(2, 3, 4, 4), rand(5, 5)
    write(out, "determinants", [helper.make_node("Det", ["a"], ["det_a"]), helper.make_node("Det", ["b"], ["det_b"])],
          [("a", a), ("b", b)], [("det_a", np.linalg.det(a.astype(np.float64)).astype(np.float32)),
                                 ("det_b", np.array(np.linalg.det(b.astype(np.float64)), np.float32))], opset=11)


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
    """Two nodes this frontend cannot lower (a Det of matrices beyond 8 x 8,
    and Unique): the error must name both."""
    x = rand(2, 9, 9)
    write(out, "unsupported", [
        helper.make_node("Det", ["x"], ["d"], name="my_det"),
        helper.make_node("Unique", ["d"], ["y"], name="my_unique"),
    ], [("x", x)], [("y", np.zeros(2, dtype=np.float32))])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_gru():
    """An LSTM (with bias) whose sequence feeds a GRU (linear_before_reset),
    whose last state feeds a Gemm: seq 5, input 4, hidden 8, batch first
    (layout 1, opset 14) so that the batch is the models' dimension 0."""
    seq, inp, hid, classes = 5, 4, 8, 3
    lw, lr, lb = rand(1, 4 * hid, inp), rand(1, 4 * hid, hid), rand(1, 8 * hid)
    gw, gr, gb = rand(1, 3 * hid, hid), rand(1, 3 * hid, hid), rand(1, 6 * hid)
    fw, fb = rand(hid, classes), rand(classes)

    def reference(x):
        x = x.astype(np.float64)
        batch = len(x)
        # LSTM, gates i, o, f, c; biases Wb + Rb.
        h, c, ys = np.zeros((batch, hid)), np.zeros((batch, hid)), []
        for t in range(seq):
            g = x[:, t] @ lw[0].T + h @ lr[0].T + lb[0, :4 * hid] + lb[0, 4 * hid:]
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
        return [("y", h @ fw + fb), ("lstm_c", lstm_c[:, None])]
    return [
        helper.make_node("LSTM", ["x", "lw", "lr", "lb"], ["lstm_y", "", "lstm_c"], hidden_size=hid, layout=1),
        helper.make_node("Squeeze", ["lstm_y", "axis2"], ["seq"]),
        helper.make_node("GRU", ["seq", "gw", "gr", "gb"], ["", "gru_h"], hidden_size=hid, linear_before_reset=1,
                         layout=1),
        helper.make_node("Squeeze", ["gru_h", "axis1"], ["last"]),
        helper.make_node("Gemm", ["last", "fw", "fb"], ["y"]),
    ], [("lw", lw), ("lr", lr), ("lb", lb), ("gw", gw), ("gr", gr), ("gb", gb), ("fw", fw), ("fb", fb),
        ("axis1", np.array([1], np.int64)), ("axis2", np.array([2], np.int64))], {"x": (seq, inp)}, reference


# (case, model function) of the own models, each written by write_own().
OWN_MODELS = [
    ("lenet", lenet),
    ("mlp", mlp),
    ("resnet_block", resnet_block),
    ("depthwise_block", depthwise_block),
    ("lstm_gru", lstm_gru),
]


def main():
    out = sys.argv[1]
    for case, make in OWN_MODELS:
        write_own(out, case, make)
    with open(os.path.join(out, "own_models.txt"), "w") as f:
        f.write("".join(case + "\n" for case, _ in OWN_MODELS))
    for make in (broadcast, views, shape_fold, pad_tile, conv_transpose_grouped, conv_pool_3d, pool_indices, runtime_indices,
                 runtime_shapes, runtime_windows, grid_sample_modes, nms_formats, resize_runtime_scales, compress_nonzero, max_unpool, determinants,
                 where_select, unsupported):
        make(out)


if __name__ == "__main__":
    main()

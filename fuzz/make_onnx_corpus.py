#!/usr/bin/python3
"""Regenerates fuzz/corpus/onnx/, the seeds of fuzz_onnx_compile (also
replayed by ctest): the models of tests/onnx/make_models.py (python3-onnx,
seeded weights) and a selection of the ONNX backend node test models of
Debian's libonnx-testdata, one op family each, whose inputs after the first
are made initializers (their test_data_set_0 values) so that shapes, axes
and indices are constants the frontend can compile. Every file is a few KB
at most. Run it after changing make_models.py or NODE_CASES, and commit the
result.

Usage: fuzz/make_onnx_corpus.py [NODE_DATA_DIR]
       (default /usr/share/libonnx-testdata/data/node; skipped if missing)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus", "onnx")

NODE_CASES = [
    "test_argmax_keepdims_example", "test_averagepool_2d_strides", "test_basic_conv_with_padding",
    "test_batchnorm_example", "test_cast_FLOAT_to_FLOAT16", "test_clip", "test_concat_3d_axis_1",
    "test_constantofshape_int_zeros", "test_conv_with_autopad_same", "test_conv_with_strides_padding",
    "test_div_bcast", "test_elu", "test_equal_bcast", "test_erf", "test_expand_dim_changed",
    "test_flatten_axis1", "test_gather_0", "test_gemm_all_attributes", "test_globalaveragepool",
    "test_hardsigmoid", "test_layer_normalization_2d_axis0", "test_leakyrelu", "test_logsoftmax_axis_1",
    "test_matmul_3d", "test_maxpool_2d_pads", "test_mean_example", "test_pow_bcast_array",
    "test_prelu_broadcast", "test_range_float_type_positive_delta",
    "test_reduce_max_default_axes_keepdim_example", "test_reduce_mean_do_not_keepdims_example",
    "test_reduce_sum_keepdims_example", "test_reshape_reordered_all_dims", "test_selu", "test_shape",
    "test_slice_neg_steps", "test_softmax_axis_1", "test_split_equal_parts_1d", "test_squeeze",
    "test_sum_example", "test_transpose_all_permutations_0", "test_tril", "test_triu",
    "test_unsqueeze_axis_0", "test_where_example",
]


def constant_inputs(case_dir):
    """The node test's model with every graph input but the first turned
    into an initializer holding its test_data_set_0 value."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    graph = model.graph
    for i, value in enumerate(list(graph.input)[1:], start=1):
        tensor = onnx.TensorProto()
        with open(os.path.join(case_dir, "test_data_set_0", f"input_{i}.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        tensor.name = value.name
        graph.initializer.append(tensor)
    while len(graph.input) > 1:
        graph.input.pop()
    onnx.checker.check_model(model)
    return model


def main():
    node_data = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/libonnx-testdata/data/node"
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.endswith(".onnx"):
            os.remove(os.path.join(OUT, name))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "onnx", "make_models.py"), tmp], check=True)
        for case in sorted(os.listdir(tmp)):
            model = os.path.join(tmp, case, "model.onnx")
            if os.path.isfile(model):
                shutil.copyfile(model, os.path.join(OUT, case + ".onnx"))
    if os.path.isdir(node_data):
        for case in NODE_CASES:
            onnx.save(constant_inputs(os.path.join(node_data, case)),
                      os.path.join(OUT, "node_" + case[len("test_"):] + ".onnx"))
    else:
        print(f"{node_data} missing: only the make_models.py models written", file=sys.stderr)
    for name in sorted(os.listdir(OUT)):
        print(f"{os.path.getsize(os.path.join(OUT, name)):6d} {name}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Copies ONNX backend node test cases with their parameter inputs frozen:
every graph input but the first becomes an initializer holding the value of
test_data_set_0, so operators whose pads, repeats, scales, sizes or weights
must be constants (Pad, Tile, Resize, ConvTranspose) are checked against the
official expected outputs. Cases of one input are skipped.

Usage: freeze_inputs.py NODE_DATA_DIR OUT_DIR CASE_PREFIX...
"""
import glob
import os
import shutil
import sys

import onnx
from onnx import numpy_helper


def freeze(src, dst):
    model = onnx.load(os.path.join(src, "model.onnx"))
    graph = model.graph
    inputs = [i for i in graph.input if i.name not in {t.name for t in graph.initializer}]
    if len(inputs) < 2:
        return False
    data = os.path.join(src, "test_data_set_0")
    for k, info in enumerate(inputs[1:], start=1):
        tensor = onnx.load_tensor(os.path.join(data, f"input_{k}.pb"))
        graph.initializer.append(numpy_helper.from_array(numpy_helper.to_array(tensor), info.name))
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    shutil.copy(os.path.join(data, "input_0.pb"), os.path.join(dst, "test_data_set_0", "input_0.pb"))
    for out in glob.glob(os.path.join(data, "output_*.pb")):
        shutil.copy(out, os.path.join(dst, "test_data_set_0"))
    return True


def main():
    src_dir, out_dir, prefixes = sys.argv[1], sys.argv[2], sys.argv[3:]
    shutil.rmtree(out_dir, ignore_errors=True)
    for case in sorted(os.listdir(src_dir)):
        if any(case.startswith(p) for p in prefixes):
            freeze(os.path.join(src_dir, case), os.path.join(out_dir, case))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# mrt_run_onnx_test.sh MRT_COMPILE MRT_RUN MNIST_DIR: the ONNX path as a user
# walks it: mrt-compile the MNIST model (and with --replicas 2), run it with mrt-run on the model
# zoo's own input .pb, and compare the written output with the zoo's
# output .pb (ONNX Runtime's answer) within 1e-4; a .pb of the wrong type
# or size, or a file that is not a TensorProto, is a one-line error.
set -euo pipefail
compile=$1 run=$2 mnist=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
fail() { echo "FAIL: $*" >&2; exit 1; }

"$compile" "$mnist/model.onnx" -o "$work/mnist.popef" > "$work/compile.txt" 2>/dev/null ||
  fail "mrt-compile failed: $(cat "$work/compile.txt")"
# The report's modelled time per inference and throughput on the target,
# beside the host's compile time.
grep -Eq "^Cycles per inference +[1-9][0-9]* \([0-9.]+ us at 1.33 GHz\)$" "$work/compile.txt" &&
  grep -Eq "^Modelled throughput +[0-9.]+ inferences/s per replica on the target$" "$work/compile.txt" &&
  grep -Eq "^Compile time \(host\) +[0-9.]+ s$" "$work/compile.txt" ||
  fail "mrt-compile's report lacks the modelled figures: $(cat "$work/compile.txt")"
# Compiled with replication factor 2: one device of 2 IPUs, two replicas;
# with -n 2 the output written is that of the request replica 1 served.
"$compile" "$mnist/model.onnx" -o "$work/mnist_r2.popef" --replicas 2 --quiet >/dev/null
mkdir "$work/out"
for model in mnist mnist_r2; do
for set in 0 1 2; do
  "$run" "$work/$model.popef" -n 2 --input "Input3=$mnist/test_data_set_$set/input_0.pb" \
    --output-dir "$work/out" >/dev/null || fail "mrt-run $model on test_data_set_$set failed"
  /usr/bin/python3 - "$work/out/Plus214_Output_0.bin" "$mnist/test_data_set_$set/output_0.pb" <<'PY' ||
import sys
import numpy as np
from onnx import TensorProto, numpy_helper
got = np.fromfile(sys.argv[1], dtype=np.float32)
proto = TensorProto()
proto.ParseFromString(open(sys.argv[2], "rb").read())
want = numpy_helper.to_array(proto).reshape(-1)
worst = float(np.max(np.abs(got - want)))
sys.exit(0 if got.shape == want.shape and worst <= 1e-4 else f"worst |error| {worst}, shapes {got.shape} {want.shape}")
PY
    fail "$model test_data_set_$set: the output differs from ONNX Runtime's"
done
done

# A .pb whose type or size is not the input's, and a file that is not one.
expect_error() {  # PATTERN ARGS...: the run fails with PATTERN on stderr
  local pattern=$1; shift
  if "$run" "$work/mnist.popef" -n 1 "$@" 2>"$work/err"; then fail "$* succeeded"; fi
  grep -q "$pattern" "$work/err" || fail "$*: stderr lacks '$pattern': $(cat "$work/err")"
}
expect_error "the tensor needs 1568" --input "Input3=$mnist/test_data_set_0/input_0.pb" -b 2
/usr/bin/python3 -c "
import numpy as np, onnx.numpy_helper as h
open('$work/ints.pb','wb').write(h.from_array(np.zeros((1,1,28,28), np.int32)).SerializeToString())"
expect_error "the file holds INT32, the tensor is F32" --input "Input3=$work/ints.pb"
printf 'not a tensor' > "$work/junk.pb"
expect_error "not an ONNX TensorProto" --input "Input3=$work/junk.pb"
expect_error "no such file" --input "Input3=$work/missing.pb"
# A model compiled with --batching-dim: mrt-run batches along it without
# being told, so requests of 3 samples fill batches of 4 (padded after 5 ms).
/usr/bin/python3 -c "
import onnx
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'relu',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 4])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 4])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '$work/relu.onnx')"
"$compile" "$work/relu.onnx" -o "$work/relu.popef" --batch 4 --batching-dim 0 --quiet
"$run" "$work/relu.popef" -n 2 -b 3 --batch-timeout 5 --json | grep -q '"failed": 0' ||
  fail "-b 3 on a model that records batching dim 0"
if "$compile" "$work/relu.onnx" -o "$work/bad.popef" --batching-dim 2 --quiet 2>"$work/err"; then
  fail "--batching-dim 2 on rank-2 tensors compiled"
fi
grep -q "batching_dim 2: 'x' has shape \[1, 4\], of rank 2" "$work/err" || fail "unclear: $(cat "$work/err")"
echo "mrt-run ONNX .pb inputs: OK"

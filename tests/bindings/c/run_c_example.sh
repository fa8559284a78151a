#!/usr/bin/env bash
# run_c_example.sh EXAMPLE_DIR
# Builds bindings_examples/c out of tree into $MRT_TEST_WORK_DIR with its
# Makefile (pkg-config finds libmrt in the install prefix) and runs it: the
# mlp check, then the misuse checks. Output lines are checked too.
set -euo pipefail
example_dir=$1
# shellcheck source=../native_example.sh
source "$(dirname "$0")/../native_example.sh"
: "${MRT_TEST_WORK_DIR:?}" "${MRT_TEST_MODEL:?}" "${MRT_PREFIX:?}"
build_dir=$MRT_TEST_WORK_DIR/build
rm -rf "$build_dir"
make --no-print-directory -f "$example_dir/Makefile" BUILD_DIR="$build_dir"
expect_prefix_libmrt "$build_dir/mlp_example"
run_mlp_example "$build_dir/mlp_example"
grep -q "MRT_NOT_FOUND" <<<"$errors"
# A wrong model path is reported, not crashed on.
if "$build_dir/mlp_example" "$MRT_TEST_WORK_DIR/missing.popef" 2>"$MRT_TEST_WORK_DIR/stderr"; then
  echo "a missing model did not fail" >&2
  exit 1
fi
grep -q "MRT_NOT_FOUND" "$MRT_TEST_WORK_DIR/stderr"
# A model built from scratch through the graph API, written, served, checked.
expect_prefix_libmrt "$build_dir/build_model"
"$build_dir/build_model" "$MRT_TEST_WORK_DIR/tiny_mlp.popef" | tee "$MRT_TEST_WORK_DIR/build_model.out"
grep -q "^build_model: ok$" "$MRT_TEST_WORK_DIR/build_model.out"
echo "c example: ok"

#!/usr/bin/env bash
# run_c_example.sh EXAMPLE_DIR
# Builds bindings_examples/c out of tree into $MRT_TEST_WORK_DIR with its
# Makefile (pkg-config finds libmrt in the install prefix) and runs it: the
# mlp check, then the misuse checks. Output lines are checked too.
set -euo pipefail
example_dir=$1
: "${MRT_TEST_WORK_DIR:?}" "${MRT_TEST_MODEL:?}"
build_dir=$MRT_TEST_WORK_DIR/build
rm -rf "$build_dir"
make --no-print-directory -f "$example_dir/Makefile" BUILD_DIR="$build_dir"
# Nothing may come from the build tree: the program links the prefix's libmrt.
linked=$(ldd "$build_dir/mlp_example" | awk '$1 ~ /^libmrt\.so/ {print $3}')
if [ -z "$linked" ] || [ "$(realpath "$(dirname "$linked")")" != "$(realpath "$MRT_PREFIX/lib")" ]; then
  echo "mlp_example does not link the prefix's libmrt ($MRT_PREFIX/lib):" >&2
  ldd "$build_dir/mlp_example" >&2
  exit 1
fi
out=$("$build_dir/mlp_example" "$MRT_TEST_MODEL")
echo "$out"
grep -Eq '^mlp: argmax [0-9] p=[0-9.]+ \(sync and async match the reference\)$' <<<"$out"
errors=$("$build_dir/mlp_example" "$MRT_TEST_MODEL" --check-errors)
echo "$errors"
grep -q "MRT_NOT_FOUND" <<<"$errors"
grep -q "unknown input 'imagez'" <<<"$errors"
grep -q "MRT_INVALID_ARGUMENT" <<<"$errors"
grep -q "misuse: every error carried its status code and message" <<<"$errors"
# A wrong model path is reported, not crashed on.
if "$build_dir/mlp_example" "$MRT_TEST_WORK_DIR/missing.popef" 2>"$MRT_TEST_WORK_DIR/stderr"; then
  echo "a missing model did not fail" >&2
  exit 1
fi
grep -q "MRT_NOT_FOUND" "$MRT_TEST_WORK_DIR/stderr"
echo "c example: ok"

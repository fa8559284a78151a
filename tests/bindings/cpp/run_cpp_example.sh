#!/usr/bin/env bash
# run_cpp_example.sh EXAMPLE_DIR
# Configures and builds bindings_examples/cpp out of tree in
# $MRT_TEST_WORK_DIR, finding libmrt and <mrt.hpp> only through the install
# prefix's CMake package (CMAKE_PREFIX_PATH), and runs it: the mlp check,
# then the misuse checks. Output lines are checked too.
set -euo pipefail
example_dir=$1
: "${MRT_TEST_WORK_DIR:?}" "${MRT_TEST_MODEL:?}" "${MRT_PREFIX:?}"
build_dir=$MRT_TEST_WORK_DIR/build
rm -rf "$build_dir"
cmake -S "$example_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$MRT_PREFIX" >/dev/null
cmake --build "$build_dir" -j2 >/dev/null
# The package found must be the prefix's, and so must the library linked.
grep -q "^mrt_DIR:PATH=$MRT_PREFIX/" "$build_dir/CMakeCache.txt" || {
  echo "find_package(mrt) did not use the prefix $MRT_PREFIX" >&2
  grep "^mrt_DIR" "$build_dir/CMakeCache.txt" >&2
  exit 1
}
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
grep -q "unknown input 'imagez'" <<<"$errors"
grep -q "MRT_INVALID_ARGUMENT" <<<"$errors"
grep -q "mrt::ModelRunner: used after it was moved from or closed" <<<"$errors"
grep -q "misuse: every error carried its status code and message" <<<"$errors"
echo "cpp example: ok"

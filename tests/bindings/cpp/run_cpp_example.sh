#!/usr/bin/env bash
# run_cpp_example.sh EXAMPLE_DIR
# Configures and builds bindings_examples/cpp out of tree in
# $MRT_TEST_WORK_DIR, finding libmrt and <mrt.hpp> only through the install
# prefix's CMake package (CMAKE_PREFIX_PATH), and runs it: the mlp check,
# then the misuse checks. Output lines are checked too.
set -euo pipefail
example_dir=$1
# shellcheck source=../native_example.sh
source "$(dirname "$0")/../native_example.sh"
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
expect_prefix_libmrt "$build_dir/mlp_example"
run_mlp_example "$build_dir/mlp_example"
grep -q "mrt::ModelRunner: used after it was moved from or closed" <<<"$errors"
echo "cpp example: ok"

#!/usr/bin/env bash
# run.sh SOURCE_DIR example|build_model|unittest
# Runs the Python binding (bindings_examples/python) against the installed
# libmrt only: the library is found as libmrt.so.0 through LD_LIBRARY_PATH
# (set by mrt_add_binding_test to the install prefix), with Debian's
# /usr/bin/python3 and python3-numpy. Nothing is written into the source
# tree: no bytecode, and the working directory is the test's scratch dir.
set -euo pipefail
source_dir=$1 mode=$2
export PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PYTHONHOME MRT_LIBRARY
# The simulated system of this test alone, so parallel tests never compete.
export MRT_HWSIM_LOCK_DIR=$MRT_TEST_WORK_DIR/locks
mkdir -p "$MRT_HWSIM_LOCK_DIR"
cd "$MRT_TEST_WORK_DIR"
case $mode in
  example) exec /usr/bin/python3 -s -B "$source_dir/example.py" "$MRT_TEST_MODEL" --check-errors ;;
  build_model) exec /usr/bin/python3 -s -B "$source_dir/build_model.py" "$MRT_TEST_WORK_DIR/tiny_mlp.popef" ;;
  unittest) exec /usr/bin/python3 -s -B "$source_dir/test_mrt.py" ;;
  *) echo "run.sh: unknown mode '$mode' (example, build_model or unittest)" >&2; exit 2 ;;
esac

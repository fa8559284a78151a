#!/usr/bin/env bash
# run.sh SOURCE_DIR example|build_model|venv|installed [PYTHON_INSTALL_DIR]
# Runs the libmrt Python package (bindings_examples/python) against the
# installed libmrt only, with Debian's /usr/bin/python3 and python3-numpy:
#   example, build_model  the examples beside the package, the library found
#                         through LD_LIBRARY_PATH (set by mrt_add_binding_test);
#   venv                  a copy of the package pip installs (offline, with
#                         Debian's setuptools) into a fresh venv, whose test
#                         suite then runs there;
#   installed             the suite against the package `cmake --install` put
#                         under the prefix's PYTHON_INSTALL_DIR, with
#                         LD_LIBRARY_PATH unset: it finds the library itself.
# Nothing is written into the source tree: no bytecode, and the working
# directory is the test's scratch dir.
set -euo pipefail
source_dir=$1 mode=$2
export PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PYTHONHOME MRT_LIBRARY
# The simulated system of this test alone, so parallel tests never compete.
export MRT_HWSIM_LOCK_DIR=$MRT_TEST_WORK_DIR/locks
mkdir -p "$MRT_HWSIM_LOCK_DIR"
cd "$MRT_TEST_WORK_DIR"
# The suite: the tests directory is the only source path on sys.path, so
# `import libmrt` finds the installed package.
run_suite() {
  "$1" -m unittest discover -s "$source_dir/tests" -t "$source_dir/tests"
}
case $mode in
  example) exec /usr/bin/python3 -s -B "$source_dir/example.py" "$MRT_TEST_MODEL" --check-errors ;;
  build_model) exec /usr/bin/python3 -s -B "$source_dir/build_model.py" "$MRT_TEST_WORK_DIR/tiny_mlp.popef" ;;
  venv)
    rm -rf venv package
    mkdir package
    cp -r "$source_dir/pyproject.toml" "$source_dir/README.md" "$source_dir/libmrt" package/
    /usr/bin/python3 -m venv --system-site-packages venv
    venv/bin/python -m pip install --quiet --no-build-isolation --no-index ./package
    export LIBMRT_TEST_PACKAGE_UNDER=$MRT_TEST_WORK_DIR/venv
    run_suite venv/bin/python ;;
  installed)
    export PYTHONPATH=$MRT_PREFIX/$3 LIBMRT_TEST_PACKAGE_UNDER=$MRT_PREFIX/$3
    unset LD_LIBRARY_PATH
    run_suite /usr/bin/python3 ;;
  *) echo "run.sh: unknown mode '$mode' (example, build_model, venv or installed)" >&2; exit 2 ;;
esac

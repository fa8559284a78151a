#!/usr/bin/env bash
# install_prefix.sh BUILD_DIR PREFIX MRT_GEN MODEL
# Fixture of the bindings tests: a fresh install of this build into PREFIX
# (the only libmrt the tests may see), the mlp example model at MODEL and
# the replicated one (add_one with replication factor 2) beside it.
set -euo pipefail
build_dir=$1 prefix=$2 mrt_gen=$3 model=$4
rm -rf "$prefix"
# The libmrt Python package too (nothing when the build installs none).
for component in library development python; do
  cmake --install "$build_dir" --prefix "$prefix" --component $component >/dev/null
done
[ -e "$prefix/lib/pkgconfig/mrt.pc" ] || { echo "install lacks lib/pkgconfig/mrt.pc" >&2; exit 1; }
mkdir -p "$(dirname "$model")"
"$mrt_gen" mlp -o "$model"
"$mrt_gen" replicated -o "$(dirname "$model")/replicated.popef"
echo "installed into $prefix; model $model"

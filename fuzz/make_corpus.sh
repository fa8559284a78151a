#!/usr/bin/env bash
# Regenerates fuzz/corpus/: one small PopEF file per example model of mrt-gen
# (the fuzzers' seeds, also replayed by ctest). Run it after a change to the
# PopEF format or to the example models, and commit the result.
#
#   fuzz/make_corpus.sh [MRT_GEN]   (default: build/release's mrt-gen, built if missing)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gen=${1:-$root/build/release/tools/mrt-gen/mrt-gen}
if [[ ! -x $gen ]]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target mrt-gen -j"$(nproc)" >/dev/null
fi
out=$root/fuzz/corpus
mkdir -p "$out"
rm -f "$out"/*.popef
# --size only changes add_one and replicated (N = 4 floats); the others have
# fixed shapes (mlp and pipeline2 carry 400 KiB of weights).
for model in $("$gen" --list); do
  "$gen" "$model" --size 4 -o "$out/$model.popef" >/dev/null
done
ls -l "$out"

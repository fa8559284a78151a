#!/usr/bin/env bash
# generate-bindings.sh HEADER OUTPUT
# Writes the raw bindings of mrt_c.h with bindgen (Debian: apt-get install
# bindgen). src/bindings.rs is this script's output for include/mrt_c.h;
# run it again after changing the header:
#   mrt-sys/generate-bindings.sh ../../include/mrt_c.h mrt-sys/src/bindings.rs
# The test tests/bindings_match_header.rs runs it against the installed
# header and fails if the committed file differs.
set -euo pipefail
header=$1 output=$2
command -v bindgen >/dev/null || { echo "bindgen not found (Debian: apt-get install bindgen)" >&2; exit 1; }
bindgen "$header" \
  --allowlist-function 'mrt_.*' --allowlist-type 'mrt_.*' --allowlist-var 'MRT_.*' \
  --size_t-is-usize --no-prepend-enum-name \
  -o "$output" -- -std=c99

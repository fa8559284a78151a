#!/usr/bin/env bash
# run_rust_example.sh CRATE_DIR
# Builds the Rust example crate with cargo (offline: it has no dependencies)
# into $MRT_TEST_WORK_DIR, then runs the mlp example, its --check-errors mode
# and `cargo test`. libmrt comes only from the install prefix, through
# PKG_CONFIG_PATH (build.rs) and LD_LIBRARY_PATH (run time).
set -euo pipefail
crate=$1
: "${MRT_TEST_WORK_DIR:?set by mrt_add_binding_test}" "${MRT_TEST_MODEL:?}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "FAIL: cargo is not on PATH; scripts/install-deps.sh installs Debian's cargo (apt-get install cargo)" >&2
  exit 1
fi
echo "using $(cargo --version), $(rustc --version)"

# Build outputs outside the source tree; the committed Cargo.lock (--locked)
# means cargo never writes next to Cargo.toml either. Warnings fail the test.
export CARGO_TARGET_DIR=$MRT_TEST_WORK_DIR/target
export RUSTFLAGS="-D warnings"
export RUSTDOCFLAGS="-D warnings"
cargo_flags=(--offline --locked --release --manifest-path "$crate/Cargo.toml")

start=$(date +%s)
cargo build "${cargo_flags[@]}"
echo "cargo build: $(( $(date +%s) - start )) s"

example=$CARGO_TARGET_DIR/release/mlp-example
"$example" "$MRT_TEST_MODEL"
"$example" --check-errors "$MRT_TEST_MODEL"

cargo test "${cargo_flags[@]}"

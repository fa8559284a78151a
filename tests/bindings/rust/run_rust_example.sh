#!/usr/bin/env bash
# run_rust_example.sh WORKSPACE_DIR
# Builds the Rust workspace (the mrt-sys and mrt crates) with cargo, offline,
# into $MRT_TEST_WORK_DIR, then runs the mlp example, its --check-errors mode
# and `cargo test` of both crates. libmrt comes only from the install
# prefix, through PKG_CONFIG_PATH (mrt-sys's build.rs) and LD_LIBRARY_PATH
# (run time). The only crate from outside, pkg-config, comes from Debian's
# /usr/share/cargo/registry (the workspace's .cargo/config.toml).
set -euo pipefail
workspace=$1
: "${MRT_TEST_WORK_DIR:?set by mrt_add_binding_test}" "${MRT_TEST_MODEL:?}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "FAIL: cargo is not on PATH; scripts/install-deps.sh installs Debian's cargo (apt-get install cargo)" >&2
  exit 1
fi
echo "using $(cargo --version), $(rustc --version)"

# Cargo reads .cargo/config.toml from the directory it runs in.
cd "$workspace"
# Build outputs outside the source tree; the committed Cargo.lock (--locked)
# means cargo never writes next to Cargo.toml either. Warnings fail the test.
export CARGO_TARGET_DIR=$MRT_TEST_WORK_DIR/target
export RUSTFLAGS="-D warnings"
export RUSTDOCFLAGS="-D warnings"
cargo_flags=(--offline --locked --release)

start=$(date +%s)
cargo build "${cargo_flags[@]}" --workspace --examples
echo "cargo build: $(( $(date +%s) - start )) s"

example=$CARGO_TARGET_DIR/release/examples/mlp-example
"$example" "$MRT_TEST_MODEL"
"$example" --check-errors "$MRT_TEST_MODEL"

cargo test "${cargo_flags[@]}" -p mrt-sys
cargo test "${cargo_flags[@]}" -p mrt
# The API documentation builds without a warning (broken links, bad HTML).
cargo doc "${cargo_flags[@]}" --no-deps --workspace

# mrt-sys's other way to find libmrt: MRT_LIB_DIR, without pkg-config.
env -u PKG_CONFIG_PATH MRT_LIB_DIR="$MRT_PREFIX/lib" cargo test "${cargo_flags[@]}" -p mrt-sys

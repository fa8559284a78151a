#!/usr/bin/env bash
# check_debs.sh BUILD_DIR C_EXAMPLE_DIR WORK_DIR VERSION
# Builds the .debs of BUILD_DIR (cpack -G DEB, reusing the built tree),
# unpacks them into WORK_DIR/root (dpkg -x, as an install would lay them
# out, without touching the system), checks each package's name, version,
# dependencies and files, then builds the C example against the root with
# pkg-config (PKG_CONFIG_SYSROOT_DIR / PKG_CONFIG_LIBDIR into the root) and
# runs it on the mlp model written by the packaged mrt-gen.
set -euo pipefail
build_dir=$1 example_dir=$2 work=$3 version=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps pkg-config; do
  command -v $tool >/dev/null || fail "$tool is not on PATH (scripts/install-deps.sh installs what the check needs)"
done

rm -rf "$work/debs" "$work/root" "$work/build"
mkdir -p "$work/debs" "$work/root" "$work/locks"
start=$(date +%s)
cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
echo "cpack -G DEB: $(( $(date +%s) - start )) s"

deb() { echo "$work/debs/${1}_${version}_$(dpkg --print-architecture).deb"; }
for package in libmrt0 libmrt-dev mrt-tools; do
  file=$(deb $package)
  [ -f "$file" ] || fail "cpack made no $(basename "$file"): $(ls "$work/debs")"
  [ "$(dpkg-deb -f "$file" Package)" = $package ] || fail "$file: Package is not $package"
  [ "$(dpkg-deb -f "$file" Version)" = "$version" ] || fail "$file: Version is not $version"
  dpkg -x "$file" "$work/root"
  # Debian's per-package license and changelog.
  grep -q "MIT License" "$work/root/usr/share/doc/$package/copyright" || fail "$package has no copyright file"
  zcat "$work/root/usr/share/doc/$package/changelog.gz" | grep -q "^## $version" ||
    fail "$package's changelog.gz has no entry for $version"
done
root=$work/root

# Dependencies: the library's on Debian's libraries, the others' on it.
grep -q "libfmt" <<<"$(dpkg-deb -f "$(deb libmrt0)" Depends)" || fail "libmrt0 does not depend on libfmt"
for package in libmrt-dev mrt-tools; do
  grep -q "libmrt0 (= $version)" <<<"$(dpkg-deb -f "$(deb $package)" Depends)" ||
    fail "$package does not depend on libmrt0 (= $version)"
done
[ "$(dpkg-deb -I "$(deb libmrt0)" shlibs)" = "libmrt 0 libmrt0 (= $version)" ] || fail "libmrt0's shlibs file"

# Each file in its package: the versioned library alone in libmrt0, what a
# build needs in libmrt-dev, tools and man pages in mrt-tools.
contents() { dpkg-deb -c "$(deb "$1")" | awk '{print $6}'; }
expect_in() {
  local package=$1; shift
  for path in "$@"; do grep -qx "./$path" <<<"$(contents "$package")" || fail "$package lacks /$path"; done
}
expect_in libmrt0 usr/lib/libmrt.so.0.1.0
contents libmrt0 | grep -q "include/\|\.pc$\|bin/" && fail "libmrt0 holds development files or tools"
expect_in libmrt-dev usr/include/mrt_c.h usr/include/mrt.hpp usr/lib/pkgconfig/mrt.pc \
  usr/lib/cmake/mrt/mrtConfig.cmake usr/share/doc/libmrt/c_api.md usr/share/doc/libmrt/LICENSE
for tool in mrt-gen mrt-info mrt-run mrt-compile mrt-bench mrt-demo mrt-fuse; do
  expect_in mrt-tools usr/bin/$tool usr/share/man/man1/$tool.1.gz
  zcat "$root/usr/share/man/man1/$tool.1.gz" | grep -q '^\.SH DESCRIPTION' || fail "$tool's man page has no DESCRIPTION"
done
zcat "$root/usr/share/man/man1/mrt-gen.1.gz" | grep -q "mlp" || fail "mrt-gen's man page does not list its models"

# The packaged tools run from the root (their RUNPATH finds the root's libmrt).
unset LD_LIBRARY_PATH
"$root/usr/bin/mrt-gen" mlp -o "$work/mlp.popef" >/dev/null
"$root/usr/bin/mrt-info" "$work/mlp.popef" | grep -q "image" || fail "the packaged mrt-info cannot read the model"

# The C example against the root, found only through pkg-config.
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/pkgconfig
unset PKG_CONFIG_PATH
# (mrt.pc's prefix is relative to the .pc file, so the sysroot is not added twice.)
include_dir=$(pkg-config --cflags-only-I mrt | sed 's/^-I//; s/ *$//')
[ "$(realpath "$include_dir")" = "$(realpath "$root/usr/include")" ] ||
  fail "pkg-config --cflags mrt in the root gives '$include_dir', not $root/usr/include"
make --no-print-directory -f "$example_dir/Makefile" BUILD_DIR="$work/build" \
  MRT_RPATH="-Wl,-rpath,$root/usr/lib"
linked=$(ldd "$work/build/mlp_example" | awk '$1 ~ /^libmrt\.so/ {print $3}')
[ "$(realpath "$linked")" = "$(realpath "$root/usr/lib/libmrt.so.0.1.0")" ] ||
  fail "the example links '$linked', not the packaged library"
"$work/build/mlp_example" "$work/mlp.popef" | tee "$work/example.out"
grep -Eq '^mlp: argmax [0-9] p=[0-9.]+ \(sync and async match the reference\)$' "$work/example.out"
"$work/build/build_model" "$work/tiny_mlp.popef" | grep -q "^build_model: ok$"
echo "debs: ok ($(cd "$work/debs" && ls -- *.deb | tr '\n' ' '))"

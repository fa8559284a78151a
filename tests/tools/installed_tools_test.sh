#!/usr/bin/env bash
# installed_tools_test.sh BUILD_DIR: installs the build into a fresh prefix
# and runs every tool from another directory with no LD_LIBRARY_PATH: each
# finds libmrt.so through its RUNPATH $ORIGIN/../lib (issue 16, item 9).
set -euo pipefail
build_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
bin=$prefix/bin
for tool in mrt-run mrt-gen mrt-info mrt-bench mrt-compile mrt-demo mrt-fuse; do
  [ -x "$bin/$tool" ] || fail "install lacks bin/$tool"
  runpath=$(readelf -d "$bin/$tool" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  [ "$runpath" = '$ORIGIN/../lib' ] || fail "$tool has RUNPATH '$runpath', expected \$ORIGIN/../lib"
done
# The install tree's docs, license, changelog and man pages; Debian's
# per-package files (cmake/DebPackages.cmake) only in the packages.
for path in share/doc/libmrt/c_api.md share/doc/libmrt/LICENSE share/doc/libmrt/CHANGELOG.md \
            share/man/man1/mrt-run.1.gz share/man/man1/mrt-gen.1.gz; do
  [ -f "$prefix/$path" ] || fail "install lacks $path"
done
[ ! -e "$prefix/share/doc/libmrt0" ] || fail "a plain install holds the Debian package's share/doc/libmrt0"
# The tools built on the public API load the installed library, not the build tree's.
for tool in mrt-gen mrt-compile mrt-demo mrt-fuse mrt-run; do
  resolved=$(env -u LD_LIBRARY_PATH ldd "$bin/$tool" | sed -n 's/.*libmrt.so.0 => \([^ ]*\).*/\1/p')
  [ "$(readlink -f "$resolved")" = "$(readlink -f "$prefix/lib/libmrt.so.0")" ] ||
    fail "$tool loads libmrt.so.0 from '$resolved', not from $prefix/lib"
done

mkdir "$work/elsewhere"
cd "$work/elsewhere"
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
unset LD_LIBRARY_PATH
"$bin/mrt-gen" mlp -o mlp.popef >/dev/null || fail "installed mrt-gen failed"
"$bin/mrt-demo" mlp.popef | grep -q "Attached device" || fail "installed mrt-demo failed"
"$bin/mrt-info" mlp.popef | grep -q "image" || fail "installed mrt-info does not list the anchor 'image'"
"$bin/mrt-run" mlp.popef -n 3 --json | grep -q '"requests": 3' || fail "installed mrt-run failed"
"$bin/mrt-bench" queues mlp.popef -n 3 --json | grep -q '"runs": 3' || fail "installed mrt-bench failed"
for tool in mrt-run mrt-gen mrt-info mrt-bench mrt-compile mrt-demo mrt-fuse; do
  "$bin/$tool" --version | grep -q "^$tool [0-9]*\.[0-9]*\.[0-9]* (libmrt)$" || fail "installed $tool --version"
done
echo "installed tools: all checks passed"

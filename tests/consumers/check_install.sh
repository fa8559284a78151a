#!/usr/bin/env bash
# check_install.sh BUILD_DIR SOURCE_DIR CC CXX
# Installs the build into a fresh temporary prefix and uses it the way an
# application would, with nothing but PKG_CONFIG_PATH / CMAKE_PREFIX_PATH /
# LD_LIBRARY_PATH pointing at it.
set -euo pipefail
build_dir=$1 source_dir=$2 cc=$3 cxx=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "--- $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "install into $prefix"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
lib=$prefix/lib/libmrt.so
[ -e "$lib" ] || fail "no $lib after install"
for f in include/mrt_c.h include/mrt.hpp include/mrt_graph.hpp include/model_runtime/ModelRuntime.hpp \
         include/popef/Model.hpp lib/pkgconfig/mrt.pc lib/cmake/mrt/mrtConfig.cmake; do
  [ -e "$prefix/$f" ] || fail "install lacks $f"
done

step "soname and exported symbols"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libmrt.so.0" ] || fail "soname is '$soname', expected libmrt.so.0"
exported=$(nm -D --defined-only "$lib" | awk '{print $3}')
[ -n "$exported" ] || fail "libmrt.so exports nothing"
others=$(echo "$exported" | grep -v '^mrt_' | grep -v '^MRT_0$' || true)
[ -z "$others" ] || fail "libmrt.so exports symbols other than mrt_*: $(echo $others | head -c 400)"
echo "$(echo "$exported" | grep -c '^mrt_') mrt_ symbols, nothing else"

step "mrt_c.h as strict C99 and as C++ without warnings"
printf '#include "mrt_c.h"\nint main(void) { return mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR); }\n' > "$work/h.c"
"$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror -pedantic-errors -I"$prefix/include" -c "$work/h.c" -o "$work/h.o"
cp "$work/h.c" "$work/h.cpp"
"$cxx" -std=c++11 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -c "$work/h.cpp" -o "$work/hpp.o"

step "C program through pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Wextra -Werror "$here/pkgconfig_c/main.c" $(pkg-config --cflags --libs mrt) -o "$work/c_app"
LD_LIBRARY_PATH=$prefix/lib "$work/c_app"

step "Model Runtime application (model_runtime/ headers, docs/compat.md) through pkg-config"
# shellcheck disable=SC2046
"$cxx" -std=c++17 -Wall -Wextra -Werror "$source_dir/tests/compat/layer_compiles.cpp" $(pkg-config --cflags --libs mrt) \
      -o "$work/compat_app"
LD_LIBRARY_PATH=$prefix/lib "$work/compat_app"

step "CMake project through find_package(mrt)"
cmake -S "$here/cmake_cpp" -B "$work/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$work/cmake_build" >/dev/null
LD_LIBRARY_PATH=$prefix/lib "$work/cmake_build/cmake_consumer"
echo "consumers: all checks passed"

#!/usr/bin/env bash
# Installs exactly the Debian packages libmrt builds, tests and runs with.
# Idempotent: does nothing when all are present. Works as root, uses sudo
# otherwise. Keep this list in step with cmake/Dependencies.cmake.
#
#   scripts/install-deps.sh          what `make test` needs (GCC)
#   scripts/install-deps.sh --fuzz   also clang 14 and its libFuzzer and
#                                    sanitizer runtimes, for the fuzz preset
#                                    (docs/fuzzing.md)
#   scripts/install-deps.sh --ci     also ccache, which .ci/run compiles
#                                    through (a repeated CI run on the same
#                                    machine recompiles only what changed)
set -euo pipefail

fuzz=false
ci=false
for arg in "$@"; do
  case $arg in
    --fuzz) fuzz=true ;;
    --ci) ci=true ;;
    *) echo "install-deps: unknown option '$arg' (known: --fuzz, --ci)" >&2; exit 2 ;;
  esac
done

packages=(
  # toolchain
  g++ make cmake pkgconf binutils
  # libraries the runtime uses (DESIGN.md section 6)
  libfmt-dev libspdlog-dev flatbuffers-compiler libflatbuffers-dev libxxhash-dev
  libeigen3-dev nlohmann-json3-dev libcli11-dev
  # oneDNN: hwsim's MatMul kernels (docs/performance.md item 1); its CMake
  # package finds OpenCL, whose headers and library are only its Recommends
  libdnnl-dev ocl-icd-opencl-dev
  # the ONNX frontend (src/onnx/, docs/onnx.md): ONNX 1.12's protobuf model,
  # checker and shape inference, over the protobuf library they are built with
  libonnx-dev libprotobuf-dev
  # tests and benchmarks
  libcmocka-dev libgtest-dev libgmock-dev libbenchmark-dev libffi-dev
  # bench_gemm_kernels compares hwsim's MatMul with these BLAS libraries
  libopenblas-dev libblis-dev
  # ONNX tests (tests/onnx/): python3-onnx writes models at test time,
  # libonnx-testdata holds the ONNX backend test cases
  python3-onnx libonnx-testdata
  # bindings examples (bindings_examples/): Python ctypes + numpy, Go (cgo)
  python3 python3-numpy golang-go
  # the Rust crates (bindings_examples/rust): the pkg-config crate from Debian's
  # /usr/share/cargo/registry, and bindgen, which mrt-sys's test reruns to
  # check its committed bindings against the header
  librust-pkg-config-dev bindgen
  # packaging (cmake/DebPackages.cmake, tools/ManPages.cmake): the tools' man
  # pages from their --help, and the .deb check's dpkg-shlibdeps
  help2man dpkg-dev
)
# Rust: Debian's cargo, unless a Rust toolchain (e.g. rustup's) is on PATH.
command -v cargo >/dev/null || packages+=(cargo)
# The fuzz preset: clang-14 and libclang-rt-14-dev (libFuzzer, ASan, UBSan).
if $fuzz; then
  packages+=(clang-14 libclang-rt-14-dev)
fi
if $ci; then
  packages+=(ccache)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# run_go_example.sh MODULE_DIR [--race]
# Builds the Go module github.com/libmrt/mrt-go (package mrt and its example
# command examples/mlp) into $MRT_TEST_WORK_DIR (build cache and
# GOPATH there too, nothing in the source tree), then runs go vet, the mlp
# example, its -check-errors mode and `go test` (also under
# GODEBUG=cgocheck=2, the strict check of the cgo pointer rules). With
# --race it runs only `go test -race`, whose cold build of the standard
# library with the race detector is slow. libmrt comes only from the install
# prefix, through PKG_CONFIG_PATH (cgo) and LD_LIBRARY_PATH.
set -euo pipefail
module=$1
race=${2:-}
: "${MRT_TEST_WORK_DIR:?set by mrt_add_binding_test}" "${MRT_TEST_MODEL:?}"

if ! command -v go >/dev/null 2>&1; then
  echo "FAIL: go is not on PATH; scripts/install-deps.sh installs Debian's golang-go" >&2
  exit 1
fi
echo "using $(go version)"

export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
export GOCACHE=$MRT_TEST_WORK_DIR/gocache GOPATH=$MRT_TEST_WORK_DIR/gopath
export GOTMPDIR=$MRT_TEST_WORK_DIR/gotmp
mkdir -p "$GOTMPDIR"
cd "$module"

if [ "$race" = --race ]; then
  # The concurrent goroutine test and callbacks arriving on library threads,
  # watched by the race detector.
  go test -race -count=1 ./...
  exit 0
fi

start=$(date +%s)
go vet ./...
go build -o "$MRT_TEST_WORK_DIR/mlp" ./examples/mlp
echo "go vet + go build: $(( $(date +%s) - start )) s"

"$MRT_TEST_WORK_DIR/mlp" "$MRT_TEST_MODEL"
"$MRT_TEST_WORK_DIR/mlp" -check-errors "$MRT_TEST_MODEL"
GODEBUG=cgocheck=2 "$MRT_TEST_WORK_DIR/mlp" "$MRT_TEST_MODEL"

go test -count=1 ./...
GODEBUG=cgocheck=2 go test -count=1 ./...

# A user's module imports the package by its path, without a replace: a
# go.work names the module's directory (GOFLAGS=-mod=mod is refused in
# workspace mode, and nothing is downloaded: GOPROXY=off).
user=$MRT_TEST_WORK_DIR/user
rm -rf "$user" && mkdir -p "$user"
cp "$(dirname "$0")/user_module/go.mod" "$(dirname "$0")/user_module/main.go" "$user/"
(cd "$user" && go work init . "$module" && GOFLAGS= go build -o "$MRT_TEST_WORK_DIR/serve" .)
"$MRT_TEST_WORK_DIR/serve" "$MRT_TEST_MODEL" | tee "$MRT_TEST_WORK_DIR/serve.out"
grep -Eq "^probs: 10 float32, argmax [0-9]$" "$MRT_TEST_WORK_DIR/serve.out"

#!/usr/bin/env bash
# logging_lifecycle_test.sh MRT_GEN MRT_RUN: at MRT_LOG_LEVEL=info the log
# tells the lifecycle (model loaded, each device attached, the session loaded
# onto it, the runner created with its replicas and options and stopped, each
# device released), and MRT_LOG_DEST naming a missing
# directory is an error on stderr, not a silently created tree (issue 16,
# item 10).
set -euo pipefail
gen=$1 run=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" add_one -o "$work/add_one.popef" >/dev/null
MRT_LOG_LEVEL=info MRT_LOG_DEST="$work/run.log" "$run" "$work/add_one.popef" -n 2 -r 2 >/dev/null
log=$(cat "$work/run.log")
for line in "\[info\] .* loaded model 'add_one' from $work/add_one.popef" \
            "\[info\] .* attached device 0 (1 IPU)" "\[info\] .* attached device 1 (1 IPU)" \
            "\[info\] .* session 'add_one': loaded onto device 0" "\[info\] .* session 'add_one': loaded onto device 1" \
            "\[info\] .* runner for model 'add_one': 2 replica(s) on device(s) 0, 1; timeout 5000 ms" \
            "\[info\] .* runner for model 'add_one': stopped" \
            "\[info\] .* released device 0" "\[info\] .* released device 1"; do
  grep -q "$line" <<<"$log" || fail "the info log lacks '$line': $log"
done
# At the default level (WARN) a clean run logs nothing.
[ -z "$("$run" "$work/add_one.popef" -n 2 2>&1 >/dev/null)" ] || fail "a clean run logged at the default level"

err=$(MRT_LOG_DEST="$work/missing/sub/run.log" "$run" "$work/add_one.popef" -n 2 2>&1 >/dev/null)
[ ! -e "$work/missing" ] || fail "MRT_LOG_DEST created the missing directory"
[[ "$err" == *"[error]"*"MRT_LOG_DEST='$work/missing/sub/run.log': the directory '$work/missing/sub' does not exist; logging to stderr"* ]] ||
  fail "no error for MRT_LOG_DEST in a missing directory: $err"
echo "logging lifecycle: all checks passed"

#!/usr/bin/env bash
# every_model_test.sh MRT_GEN MRT_RUN MRT_BENCH: every model mrt-gen writes
# goes through mrt-run (sync and async), mrt-bench callbacks and mrt-bench
# queues (with --real-data), each under `timeout` so that a hang fails the
# test at once instead of stalling CI. Also: partial batches, device waits,
# a system too small and --json errors.
set -euo pipefail
gen=$1 run=$2 bench=$3
work=$(mktemp -d)
background=
trap '[ -n "$background" ] && kill "$background" 2>/dev/null; rm -rf "$work"' EXIT
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
fail() { echo "FAIL: $*" >&2; exit 1; }
# bounded SECONDS CMD...: runs CMD, failing the test if it takes longer.
bounded() {
  local limit=$1 rc=0
  shift
  timeout "$limit" "$@" || rc=$?
  [ $rc -ne 124 ] || fail "hung (killed after ${limit}s): $*"
  return $rc
}

models=$("$gen" --list 2>/dev/null || true)
[ -n "$models" ] || models="add_one mlp stateful conditional remote_buffer time_major replicated pipeline2"
for model in $models; do
  "$gen" "$model" -o "$work/$model.popef" >/dev/null
  bounded 30 "$run" "$work/$model.popef" -n 20 --json > "$work/r.json" || fail "mrt-run $model: $(cat "$work/r.json")"
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"] == 20 and r["failed"] == 0, r
assert r["first_request_us"] > 0, r
lat = r["latency_us"]
assert 0 < lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"], lat
assert set(r["phase_mean_us"]) == {"request", "read_preparation", "read_queue", "computation"}, r
assert r["phase_mean_us"]["computation"] > 0, r' "$work/r.json" || fail "mrt-run $model report: $(cat "$work/r.json")"
  bounded 30 "$run" "$work/$model.popef" -n 20 --async --threads 2 >/dev/null || fail "mrt-run --async $model"
  for mode in callbacks queues; do
    bounded 30 "$bench" $mode "$work/$model.popef" -n 20 --real-data --json > "$work/b.json" ||
      fail "mrt-bench $mode $model: $(cat "$work/b.json")"
    grep -q '"runs": 20' "$work/b.json" || fail "mrt-bench $mode $model: $(cat "$work/b.json")"
  done
done

# replicated (replication factor 2 in the model): mrt-run serves both
# in-model replicas of each device (-r 2: two devices, four replicas), and
# mrt-bench feeds both replicas at every run, each with its own data.
bounded 30 "$run" "$work/replicated.popef" -n 20 -r 2 --json > "$work/r.json" || fail "mrt-run -r 2 replicated"
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"] == 20 and r["failed"] == 0 and r["replicas"] == 4, r' "$work/r.json" ||
  fail "mrt-run -r 2 replicated report: $(cat "$work/r.json")"
for mode in callbacks queues; do
  bounded 30 "$bench" $mode "$work/replicated.popef" -n 20 --real-data --json > "$work/b.json" ||
    fail "mrt-bench $mode replicated: $(cat "$work/b.json")"
  /usr/bin/python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
# 40 outputs, less the first of each of the 8 input sets (the reference).
assert b["runs"] == 20 and b["mismatches"] == 0 and b["outputs_checked"] == 32, b' "$work/b.json" ||
    fail "mrt-bench $mode replicated report: $(cat "$work/b.json")"
done

# stateful: acc_save is written only by Save, so Main runs do not queue it,
# and --real-data says why it compares no outputs.
bounded 30 "$bench" queues "$work/stateful.popef" -n 1 >/dev/null || fail "queues stateful -n 1"
bounded 30 "$bench" queues "$work/stateful.popef" -n 4 --real-data --json > "$work/b.json" || fail "stateful real data"
grep -q '"outputs_not_checked": "the model keeps state across runs' "$work/b.json" ||
  fail "--real-data on stateful does not explain its check: $(cat "$work/b.json")"
# acc_out is unbatched (F32[4]): a request of 2 model batches gets 2 of them.
"$gen" stateful --batch 2 -o "$work/stateful2.popef" >/dev/null
bounded 30 "$run" "$work/stateful2.popef" -n 3 -b 4 --json | grep -q '"failed": 0' || fail "stateful -b 4"

# Requests smaller than the model's batch: refused with a reason (exit 2),
# or padded after the --batch-timeout the user chose.
"$gen" add_one --batch 4 -o "$work/add4.popef" >/dev/null
set +e
err=$(bounded 30 "$run" "$work/add4.popef" -n 2 -b 3 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] || fail "-b 3 on a batch-4 model exited $rc"
[[ "$err" == *"-b 3: the model takes whole batches of 4 samples (input 'x' F32[4,16])"* ]] || fail "unclear: $err"
set +e
err=$(bounded 30 "$run" "$work/add4.popef" -n 2 -b 3 --batching-dim 0 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] || fail "-b 3 --batching-dim 0 without --batch-timeout exited $rc"
[[ "$err" == *"give --batch-timeout MS"* ]] || fail "unclear: $err"
start=$(date +%s%N)
bounded 30 "$run" "$work/add4.popef" -n 4 -b 3 --batching-dim 0 --batch-timeout 20 --json |
  grep -q '"failed": 0' || fail "-b 3 --batching-dim 0 --batch-timeout 20"
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
# Well under the 5 s flush, with room for a sanitizer build on a busy machine.
[ $elapsed_ms -lt 4500 ] || fail "4 padded requests took ${elapsed_ms} ms (the 5 s flush timeout?)"
bounded 30 "$run" "$work/add4.popef" -n 4 -b 8 --batching-dim 0 --json | grep -q '"batch": 8' || fail "-b 8"
set +e
err=$("$run" "$work/add4.popef" --batch-timeout 5 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] && [[ "$err" == *"--batch-timeout requires --batching-dim"* ]] || fail "--batch-timeout alone: $rc $err"

# A system too small for the request: said at once, naming MRT_HWSIM_IPUS.
set +e
out=$(bounded 30 "$run" "$work/add_one.popef" -r 5 --wait --json 2>/dev/null); rc=$?
set -e
[ $rc -eq 1 ] || fail "-r 5 on 4 IPUs exited $rc"
/usr/bin/python3 -c '
import json, sys
e = json.loads(sys.argv[1])["error"]
assert "need 5 IPU(s) and the simulated system has 4" in e and "MRT_HWSIM_IPUS" in e, e' "$out" ||
  fail "-r 5 --json error: $out"

# --wait=SECONDS for a busy device: fails after about that long, naming the wait.
MRT_HWSIM_IPUS=1 timeout 60 "$run" "$work/add_one.popef" -n 100000000 >/dev/null 2>&1 &
background=$!
for _ in $(seq 100); do
  [ -n "$(ls "$work/locks" 2>/dev/null)" ] && break
  sleep 0.05
done
sleep 0.2
start=$(date +%s%N)
if err=$(MRT_HWSIM_IPUS=1 bounded 30 "$run" "$work/add_one.popef" -n 1 --wait=0.5 2>&1 >/dev/null); then
  fail "a busy device was attached"
fi
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $elapsed_ms -ge 400 ] || fail "--wait=0.5 gave up after ${elapsed_ms} ms: $err"
[[ "$err" == *"WAIT_WITH_TIMEOUT"* ]] || fail "the error does not name the wait: $err"
kill "$background" 2>/dev/null || true
wait "$background" 2>/dev/null || true
background=

# A missing --input file is "no such file", in JSON too with --json.
set +e
out=$("$run" "$work/add_one.popef" --input "x=$work/missing.bin" --json 2>/dev/null); rc=$?
set -e
[ $rc -eq 1 ] || fail "missing --input file exited $rc"
[[ "$out" == *"\"error\": \"--input x=$work/missing.bin: no such file\""* ]] || fail "missing --input: $out"
echo "every model: all checks passed"

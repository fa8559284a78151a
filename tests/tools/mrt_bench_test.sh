#!/usr/bin/env bash
# mrt_bench_test.sh MRT_GEN MRT_BENCH: both mrt-bench modes run briefly on
# add_one and mlp, with and without --real-data, and print the runs they were
# asked for in valid JSON with consistent figures; --time stops by the
# clock; bad input gives a one-line error and a non-zero exit.
set -euo pipefail
gen=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" add_one -o "$work/add_one.popef" >/dev/null
"$gen" mlp -o "$work/mlp.popef" >/dev/null

# check_json FILE MODE RUNS REAL_DATA BYTES_IN BYTES_OUT
check_json() {
  /usr/bin/python3 - "$@" <<'PY' || fail "bad report for ${2} ($1): $(cat "$1")"
import json, sys
path, mode, runs, real, bytes_in, bytes_out = sys.argv[1:]
r = json.load(open(path))
assert r["mode"] == mode, r["mode"]
assert r["runs"] == int(runs), r["runs"]
assert r["real_data"] == (real == "1"), r["real_data"]
assert r["bytes_in_per_run"] == int(bytes_in) and r["bytes_out_per_run"] == int(bytes_out)
assert r["seconds"] > 0 and r["runs_per_second"] > 0 and r["device_seconds"] > 0
assert abs(r["bytes_in_per_second"] - r["runs_per_second"] * int(bytes_in)) < 1e-6 * r["bytes_in_per_second"] + 1
lat = r["latency_us"]
assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
if real == "1":
    # 8 input sets: the first run of each is the reference for the others.
    assert r["mismatches"] == 0 and r["outputs_checked"] == int(runs) - 8, r
else:
    assert "mismatches" not in r
PY
}

for mode in callbacks queues; do
  "$bench" $mode "$work/add_one.popef" -n 200 --json > "$work/a.json"
  check_json "$work/a.json" $mode 200 0 64 64
  "$bench" $mode "$work/add_one.popef" -n 200 --real-data --json > "$work/a.json"
  check_json "$work/a.json" $mode 200 1 64 64
  "$bench" $mode "$work/mlp.popef" -n 40 --real-data --json > "$work/m.json"
  check_json "$work/m.json" $mode 40 1 3136 40
  "$bench" $mode "$work/mlp.popef" -n 40 --replicas 2 --json > "$work/m.json"
  check_json "$work/m.json" $mode 40 0 3136 40
  # The table a person reads.
  table=$("$bench" $mode "$work/add_one.popef" -n 50)
  for row in "runs  *50" "runs/s" "input MiB/s" "output MiB/s" "simulated device time" "p99"; do
    grep -q "$row" <<<"$table" || fail "$mode table lacks '$row': $table"
  done
done

# Deeper rings in queues mode, reported in the JSON; rings of 0 are refused.
"$bench" queues "$work/add_one.popef" -n 100 --ring-size-multiplier 8 --real-data --json > "$work/r.json"
check_json "$work/r.json" queues 100 1 64 64
grep -q '"ring_size_multiplier": 8' "$work/r.json" || fail "no ring_size_multiplier 8 in $(cat "$work/r.json")"
if "$bench" queues "$work/add_one.popef" --ring-size-multiplier 0 >/dev/null 2>&1; then
  fail "--ring-size-multiplier 0 was accepted"
fi

# --time stops by the clock (no run count given).
"$bench" queues "$work/add_one.popef" --time 0.3 --json > "$work/t.json"
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["runs"] > 0 and 0.3 <= r["seconds"] < 5, r' "$work/t.json" || fail "--time 0.3: $(cat "$work/t.json")"

if err=$("$bench" sideways "$work/add_one.popef" 2>&1 >/dev/null); then fail "an unknown mode was accepted"; fi
[[ "$err" == *"unknown mode 'sideways': expected 'callbacks' or 'queues'"* ]] || fail "unclear error: $err"
if err=$("$bench" queues "$work/missing.popef" 2>&1 >/dev/null); then fail "a missing file was accepted"; fi
[[ "$err" == *"missing.popef"* ]] || fail "error does not name the missing file: $err"
printf 'not a popef file' > "$work/junk.popef"
if err=$("$bench" callbacks "$work/junk.popef" 2>&1 >/dev/null); then fail "a junk file was accepted"; fi
[[ "$err" == mrt-bench:* ]] || fail "unclear error for a junk file: $err"
echo "mrt-bench: all checks passed"

#!/usr/bin/env bash
# mrt_run_test.sh MRT_GEN MRT_RUN: mrt-run on add_one with a known input file
# writes x + 1, reports every request in its JSON, writes execution profiles
# with --profile (one directory per replica when there are several), and
# turns bad input into a one-line error and a non-zero exit.
set -euo pipefail
gen=$1 run=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" add_one --size 4 -o "$work/add_one.popef" >/dev/null
# x = [1.5, -2, 0, 41] as little-endian f32.
printf '\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x24\x42' > "$work/x.bin"
mkdir "$work/out"
"$run" "$work/add_one.popef" -n 50 --input "x=$work/x.bin" --output-dir "$work/out" --json > "$work/report.json"
grep -q '"requests": 50' "$work/report.json" || fail "report lacks 50 requests: $(cat "$work/report.json")"
grep -q '"failed": 0' "$work/report.json" || fail "report has failures"
# The target's modelled figures: every add_one request is one Main run of the
# same modelled cost, and the throughput is the requests over that time.
/usr/bin/python3 - "$work/report.json" <<'PY' || fail "modelled figures wrong: $(cat "$work/report.json")"
import json, sys
m = json.load(open(sys.argv[1]))["modelled"]
assert m["seconds"] > 0 and m["replica_device_seconds"] == [m["seconds"]], m
assert abs(m["device_us_per_request"] * 50 - m["seconds"] * 1e6) < 1e-6 * m["seconds"] * 1e6, m
assert abs(m["requests_per_second"] - 50 / m["seconds"]) < 1e-6 * m["requests_per_second"], m
assert m["samples_per_second"] == m["requests_per_second"], m
PY
expected=$(printf '\x00\x00\x20\x40\x00\x00\x80\xbf\x00\x00\x80\x3f\x00\x00\x28\x42' | od -An -tx1)
actual=$(od -An -tx1 "$work/out/y.bin")
[ "$expected" = "$actual" ] || fail "y.bin is$actual, expected$expected (x + 1)"

"$run" "$work/add_one.popef" -n 40 --threads 2 --async --replicas 2 > "$work/table.txt"
grep -q "requests *40" "$work/table.txt" || fail "async run on 2 replicas did not report 40 requests"
grep -Eq "throughput \(req/s\) +[0-9.]+ +[0-9.]+$" "$work/table.txt" ||
  fail "the table lacks host and modelled throughput: $(cat "$work/table.txt")"
grep -Eq "device time per request \(us\) +[0-9.]+$" "$work/table.txt" ||
  fail "the table lacks the modelled device time per request: $(cat "$work/table.txt")"
"$run" "$work/add_one.popef" -n 10 --batch 3 --json | grep -q '"batch": 3' || fail "--batch 3 run failed"

# --profile DIR: the engine's autoReport files, well-formed.
"$run" "$work/add_one.popef" -n 5 --profile "$work/profile" --json >/dev/null || fail "--profile run failed"
for f in profile_trace.json intervals.csv profile_summary.txt; do
  [ -s "$work/profile/$f" ] || fail "--profile did not write $f: $(ls -R "$work/profile" 2>&1)"
done
head -c 1 "$work/profile/profile_trace.json" | grep -q '{' || fail "profile_trace.json is not a JSON object"
[ "$(head -n 1 "$work/profile/intervals.csv")" = "begin,end,compute_tiles,exchange_tiles,sync_tiles" ] ||
  fail "intervals.csv header is $(head -n 1 "$work/profile/intervals.csv")"
[ "$(wc -l < "$work/profile/intervals.csv")" -gt 1 ] || fail "intervals.csv has no rows"
grep -q "Target: " "$work/profile/profile_summary.txt" || fail "profile_summary.txt lacks the target"
# With replicas each writes its own files.
"$run" "$work/add_one.popef" -n 6 --replicas 2 --profile "$work/profile2" >/dev/null ||
  fail "--profile run on 2 replicas failed"
for r in 0 1; do
  for f in profile_trace.json intervals.csv profile_summary.txt; do
    [ -s "$work/profile2/replica$r/$f" ] || fail "replica $r did not write $f: $(ls -R "$work/profile2" 2>&1)"
  done
done

if err=$("$run" "$work/add_one.popef" --input "nope=$work/x.bin" 2>&1 >/dev/null); then
  fail "an unknown --input name was accepted"
fi
[[ "$err" == *"--input nope: the model has no execute input of that name"* ]] || fail "unclear error: $err"
head -c 3 "$work/x.bin" > "$work/short.bin"
if err=$("$run" "$work/add_one.popef" --input "x=$work/short.bin" 2>&1 >/dev/null); then
  fail "a short input file was accepted"
fi
[[ "$err" == *"expected 16 bytes, the file has 3"* ]] || fail "unclear error: $err"
echo "mrt-run: all checks passed"

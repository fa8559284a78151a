#!/usr/bin/env bash
# mrt_fuse_test.sh MRT_GEN MRT_FUSE MRT_INFO MRT_RUN: mrt-fuse writes add_one
# and mlp as one PopEF; mrt-info lists both models with their shared
# executable; mrt-run serves each by --model with x + 1 for add_one; bad
# input is a one-line error and a non-zero exit.
set -euo pipefail
gen=$1 fuse=$2 info=$3 run=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MRT_HWSIM_LOCK_DIR=$work/locks MRT_HWSIM_IPUS=4
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" add_one --size 4 -o "$work/add_one.popef" >/dev/null
"$gen" mlp -o "$work/mlp.popef" >/dev/null
# Outputs go to files first: grep -q quitting early would fail a pipe (pipefail).
"$fuse" "$work/add_one.popef" "$work/mlp.popef" -o "$work/fused.popef" > "$work/fuse.txt"
grep -q "fused 'add_one', 'mlp' into" "$work/fuse.txt" || fail "mrt-fuse did not report the models it fused"

"$info" "$work/fused.popef" > "$work/info.txt"
grep -q "Model 'add_one'" "$work/info.txt" || fail "mrt-info does not list add_one: $(cat "$work/info.txt")"
grep -q "Model 'mlp'" "$work/info.txt" || fail "mrt-info does not list mlp"
[ "$(grep -c "'add_one+mlp', .* bytes, fused" "$work/info.txt")" = 2 ] || fail "mrt-info does not show the shared executable twice"
grep -q "add_one/x" "$work/info.txt" || fail "mrt-info does not show add_one's handle add_one/x"
"$info" "$work/fused.popef" --json > "$work/info.json"
grep -q '"shared_executable": "add_one+mlp"' "$work/info.json" || fail "mrt-info --json lacks shared_executable"

# x = [1.5, -2, 0, 41] as little-endian f32; y = x + 1.
printf '\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x24\x42' > "$work/x.bin"
mkdir "$work/out"
"$run" "$work/fused.popef" --model add_one -n 5 --input "x=$work/x.bin" --output-dir "$work/out" --json > "$work/run.json"
grep -q '"failed": 0' "$work/run.json" || fail "mrt-run --model add_one failed"
expected=$(printf '\x00\x00\x20\x40\x00\x00\x80\xbf\x00\x00\x80\x3f\x00\x00\x28\x42' | od -An -tx1)
[ "$expected" = "$(od -An -tx1 "$work/out/y.bin")" ] || fail "add_one of the fused file did not give x + 1"
"$run" "$work/fused.popef" --model mlp -n 5 --json > "$work/run.json"
grep -q '"failed": 0' "$work/run.json" || fail "mrt-run --model mlp failed"
if "$run" "$work/fused.popef" -n 1 2> "$work/err.txt"; then fail "mrt-run served a fused file without --model"; fi
grep -q "'add_one', 'mlp'" "$work/err.txt" || fail "mrt-run without --model does not name the models: $(cat "$work/err.txt")"

# Bad input: one model; models that need more tiles than the IPU has.
set +e
"$fuse" "$work/add_one.popef" -o "$work/one.popef" 2> "$work/err.txt"; status=$?
set -e
[ "$status" = 2 ] || fail "one model: exit status $status, expected 2"
"$gen" add_one --tiles 4 --size 16384 -o "$work/add_one_t4.popef" >/dev/null
"$gen" mlp --tiles 4 -o "$work/mlp_t4.popef" >/dev/null
set +e
"$fuse" "$work/add_one_t4.popef" "$work/mlp_t4.popef" -o "$work/crowded.popef" 2> "$work/err.txt"; status=$?
set -e
[ "$status" = 1 ] || fail "crowded models: exit status $status, expected 1"
grep -q "^mrt-fuse: mrt_model_fuse: fusion: the models need .* tiles together ('add_one' 4 tile(s) (0..3), 'mlp' .*the IPU has 4$" \
  "$work/err.txt" || fail "crowded models: $(cat "$work/err.txt")"
[ "$(wc -l < "$work/err.txt")" = 1 ] || fail "the error is not one line"
[ ! -e "$work/crowded.popef" ] || fail "a refused fusion left a file"
echo "mrt-fuse: all checks passed"

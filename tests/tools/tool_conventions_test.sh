#!/usr/bin/env bash
# tool_conventions_test.sh TOOL...: every mrt-* tool prints its version with
# --version and exits 0 (as after --help, whose options show their defaults),
# and exits 2 with a one-line reason pointing to --help on a usage error;
# --help shows no number of 7 digits or more.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
version=$(sed -n 's/^#define MRT_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$(dirname "$0")/../../include/mrt_c.h" | paste -sd.)
for tool in "$@"; do
  name=$(basename "$tool")
  out=$("$tool" --version) || fail "$name --version exited $?"
  [ "$out" = "$name $version (libmrt)" ] || fail "$name --version printed '$out'"
  help=$("$tool" --help) || fail "$name --help exited $?"
  # Ranges and defaults a person reads: "1 to 4 Gi", not 4294967296.
  if grep -qE '[0-9]{7,}' <<<"$help"; then fail "$name --help shows unreadable numbers: $(grep -E '[0-9]{7,}' <<<"$help")"; fi
  status=0
  "$tool" --no-such-option 2>"${TMPDIR:-/tmp}/err.$$" >/dev/null || status=$?
  [ "$status" = 2 ] || fail "$name --no-such-option exited $status, expected 2"
  grep -q "^$name: ." "${TMPDIR:-/tmp}/err.$$" || fail "$name: usage error lacks the reason: $(cat "${TMPDIR:-/tmp}/err.$$")"
  grep -q "(see --help)$" "${TMPDIR:-/tmp}/err.$$" || fail "$name: usage error does not point to --help"
  rm -f "${TMPDIR:-/tmp}/err.$$"
done
# Defaults are shown: mrt-run's iterations and mrt-compile's batch.
for tool in "$@"; do
  case $(basename "$tool") in
    mrt-run) "$tool" --help | grep -q -- "--iterations [A-Z:]*=1000" || fail "mrt-run --help hides the default of --iterations" ;;
    mrt-compile) "$tool" --help | grep -q -- "--batch INT=1 " || fail "mrt-compile --help hides the default of --batch" ;;
  esac
done
echo "tool conventions: OK ($#)"

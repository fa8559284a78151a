# Sourced by the C and C++ example tests: the checks every natively built
# mlp example gets. Needs MRT_PREFIX and MRT_TEST_MODEL.

# Nothing may come from the build tree: the program links the prefix's libmrt.
expect_prefix_libmrt() {
  local program=$1 linked
  linked=$(ldd "$program" | awk '$1 ~ /^libmrt\.so/ {print $3}')
  if [ -z "$linked" ] || [ "$(realpath "$(dirname "$linked")")" != "$(realpath "$MRT_PREFIX/lib")" ]; then
    echo "$(basename "$program") does not link the prefix's libmrt ($MRT_PREFIX/lib):" >&2
    ldd "$program" >&2
    return 1
  fi
}

# Runs the mlp check, then the misuse checks; leaves their output in $errors
# for the caller's language-specific expectations.
run_mlp_example() {
  local program=$1 out
  out=$("$program" "$MRT_TEST_MODEL")
  echo "$out"
  grep -Eq '^mlp: argmax [0-9] p=[0-9.]+ \(sync and async match the reference\)$' <<<"$out"
  errors=$("$program" "$MRT_TEST_MODEL" --check-errors)
  echo "$errors"
  grep -q "unknown input 'imagez'" <<<"$errors"
  grep -q "MRT_INVALID_ARGUMENT" <<<"$errors"
  grep -q "misuse: every error carried its status code and message" <<<"$errors"
}

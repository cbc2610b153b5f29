#!/usr/bin/env bash
# What data costs: check and compile of the same 10^6-instance pipeline
# (1,000 stages x 1,000 iterations, random DAG) written three ways: plain
# dependencies, buffers with `sync inferred` (the data gives the
# dependencies), and buffers with `sync declared` (the dependencies written
# out and every access checked for races). Prints a Markdown table.
#   bench/data-scale.sh [pipec]      (default: build/pipec)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pipec="${1:-$here/../build/pipec}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
args=(random --stages 1000 --iterations 1000 --window 16)
python3 "$here/gen.py" "${args[@]}" -o "$work/plain.pipe"
python3 "$here/gen.py" "${args[@]}" --buffers inferred -o "$work/inferred.pipe"
python3 "$here/gen.py" "${args[@]}" --buffers declared -o "$work/declared.pipe"
measure() { # prints "seconds MiB"
  /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.2f %.0f", $1, $2 / 1024}'
}
echo "| 10^6 instances | check s | check MiB | compile --emit=json s | compile MiB |"
echo "|---|---|---|---|---|"
for f in plain inferred declared; do
  read -r cs cm <<< "$(measure "$pipec" check "$work/$f.pipe" --error-limit=1)"
  read -r ps pm <<< "$(measure "$pipec" compile "$work/$f.pipe" --emit=json -o /dev/null)"
  echo "| $f | $cs | $cm | $ps | $pm |"
done

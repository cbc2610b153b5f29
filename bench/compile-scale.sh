#!/usr/bin/env bash
# Compile time and peak memory of `pipec compile --emit=json` from 10^4 to
# 10^7 stage instances. Prints a Markdown table.
#
#   bench/compile-scale.sh [path/to/pipec]      (default: build/pipec)
#
# Two shapes: "unrolled" is a random 100-stage DAG over 8 streams, unrolled
# N/100 times (each stage also depends on a quarter of the stages' previous
# iteration); "flat" is one iteration of an N-stage random DAG with local
# edges (up to 10^5: parsing such files is the slow part, see docs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pipec="${1:-$here/../build/pipec}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "| shape | instances | declared edges | waits | parse+check s | unroll s | reduce s | events s | analysis s | JSON emit s | total s | peak MiB | JSON MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
run() { # shape file
  local shape="$1" file="$2" start end
  rm -f "$work/out.json" # replacing a large old file would be timed too
  start=$(date +%s.%N)
  "$pipec" compile "$file" --emit=json -o "$work/out.json" --stats \
    2>"$work/stats" >/dev/null
  end=$(date +%s.%N)
  grep '^pipec:' "$work/stats" |
    python3 "$here/stats_row.py" "$shape" "$start" "$end" "$work/out.json"
}
for n in 10000 100000 1000000 10000000; do
  python3 "$here/gen.py" random --stages 100 --streams 8 --iterations $((n / 100)) -o "$work/u.pipe"
  run unrolled "$work/u.pipe"
done
for n in 10000 100000; do
  python3 "$here/gen.py" random --stages "$n" --streams 8 -o "$work/f.pipe"
  run flat "$work/f.pipe"
done

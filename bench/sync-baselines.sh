#!/usr/bin/env bash
# Synchronisation counts on generated DAGs: pipec against simple baselines.
# Prints a Markdown table.
#   bench/sync-baselines.sh [build dir]      (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| pipeline | strategy | waits | records | event objects | simulated makespan us |"
echo "|---|---|---|---|---|---|"
python3 "$here/gen.py" random --stages 2000 --streams 8 -o "$work/random.pipe"
python3 "$here/gen.py" layered --layers 50 --width 16 --streams 8 -o "$work/layered.pipe"
python3 "$here/gen.py" transformer --layers 24 --microbatches 8 --streams 6 -o "$work/transformer.pipe"
python3 "$here/gen.py" random --stages 100 --streams 8 --iterations 100 -o "$work/unrolled.pipe"
for f in random layered transformer unrolled; do
  "$build/bench/pipec-bench-sync" "$work/$f.pipe" "$f"
done

echo
echo "Automatic stream assignment (stages without 'on'): simulated makespan and"
echo "waits of each --assign method."
echo
python3 "$here/assign.py" "$build"

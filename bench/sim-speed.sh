#!/usr/bin/env bash
# Speed of the device model: simulated events per second, for pipelines of
# 10^3 to 10^6 stage instances, in both lowerings. Prints a Markdown table.
#
#   bench/sim-speed.sh [path/to/pipec]      (default: build/pipec)
#
# The pipeline is the 100-stage random DAG over 8 streams of
# compile-scale.sh, unrolled N/100 times.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pipec="${1:-$here/../build/pipec}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "| instances | lowering | simulated events | model s | events per second | whole run s | peak MiB |"
echo "|---|---|---|---|---|---|---|"
for n in 1000 10000 100000 1000000; do
  python3 "$here/gen.py" random --stages 100 --streams 8 --iterations $((n / 100)) -o "$work/p.pipe"
  /usr/bin/time -f "%e %M" -o "$work/time" "$pipec" run "$work/p.pipe" \
    --backend=sim --lower=both --replays=1 --stats -o /dev/null 2>"$work/stats"
  read -r wall rss < "$work/time"
  grep "simulated events" "$work/stats" | while read -r line; do
    python3 - "$line" "$wall" "$rss" <<'PY'
import re, sys
line, wall, rss = sys.argv[1:4]
m = re.search(r"\((\w+)\): (\d+) instances, (\d+) simulated events in ([\d.]+) s, (\d+) events", line)
lowering, n, events, seconds, rate = m.groups()
print(f"| {n} | {lowering} | {events} | {seconds} | {int(rate):,} | {wall} | {int(rss) // 1024} |")
PY
  done
done

#!/usr/bin/env bash
# Every benchmark behind docs/performance.md, from one command. Prints the
# tables in Markdown. Takes about ten minutes on 2 cores (the peers are
# given up to 60 s each).
#   bench/run-all.sh [build dir]      (default: build)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
echo "## Compile time and memory"; echo
bash "$here/compile-scale.sh" "$build/pipec"; echo
echo "## Against Graphviz tred and networkx"; echo
bash "$here/peers.sh" "$build/pipec"; echo
echo "## Synchronisation against baselines"; echo
bash "$here/sync-baselines.sh" "$build"; echo
echo "## What a run's what-ifs cost"; echo
python3 "$here/whatif-cost.py" "$build/pipec"; echo
echo "## Simulator speed"; echo
bash "$here/sim-speed.sh" "$build/pipec"
echo; echo "## Adversarial inputs (docs/robustness.md)"; echo
python3 "$here/adversarial.py" "$build/pipec"
echo; echo "## Issue 18 targets"; echo
python3 "$here/targets.py" "$build/pipec"

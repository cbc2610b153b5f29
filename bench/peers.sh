#!/usr/bin/env bash
# pipec's transitive reduction against the tools a user would otherwise
# reach for, on the same DAGs: Graphviz `tred` and networkx's
# `transitive_reduction` (both from Debian's packages; installed if missing).
# A peer that takes over 60 s is skipped and the table says so. The graph is
# the one pipec reduces: dependencies and stream order, 8 streams.
#
#   bench/peers.sh [path/to/pipec] [sizes...]   (default: 1000 3000 10000 30000)
#
# tred reads and writes DOT, so it is compared with pipec's whole compile
# (parse, check, plan, JSON); networkx's reduction alone (its input is not
# timed) with pipec's reduction phase.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pipec="${1:-$here/../build/pipec}"
shift || true
sizes=("${@:-1000 3000 10000 30000}")
sizes=(${sizes[*]})
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python_nx=""
for py in /usr/bin/python3 python3; do
  if "$py" -c "import networkx" 2>/dev/null; then python_nx="$py"; break; fi
done
if ! command -v tred >/dev/null || [ -z "$python_nx" ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y -qq graphviz python3-networkx >/dev/null 2>&1 || true
  python_nx=/usr/bin/python3
fi

secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }
echo "| stages | edges | reduced edges: pipec / tred / networkx | pipec reduction s | pipec compile s | tred s | networkx s | tred / pipec compile | networkx / pipec reduction |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  python3 "$here/gen.py" random --stages "$n" --streams 8 -o "$work/g.pipe"
  python3 "$here/gen.py" random --stages "$n" --streams 8 --dot --stream-order -o "$work/g.dot"
  python3 "$here/gen.py" random --stages "$n" --streams 8 --edges --stream-order -o "$work/g.edges"
  edges=$(grep -c -- '->' "$work/g.dot")

  start=$(date +%s.%N)
  "$pipec" compile "$work/g.pipe" --emit=json -o /dev/null --stats 2>"$work/stats" >/dev/null
  end=$(date +%s.%N)
  total=$(secs "$start" "$end")
  ours=$(grep -o '[0-9]* reduced edges' "$work/stats" | cut -d' ' -f1)
  reduce=$(grep -o 'reduction [0-9.]* s' "$work/stats" | cut -d' ' -f2)

  start=$(date +%s.%N)
  if timeout 60 tred "$work/g.dot" > "$work/tred.dot" 2>/dev/null; then
    end=$(date +%s.%N)
    tred_s=$(secs "$start" "$end")
    tred_edges=$(grep -c -- '->' "$work/tred.dot")
  else
    tred_s="skipped (over 60 s)"; tred_edges="-"
  fi
  if out=$(timeout 60 "$python_nx" "$here/nx_reduce.py" "$work/g.edges"); then
    nx_edges=${out% *}; nx_s=${out#* }
  else
    nx_s="skipped (over 60 s)"; nx_edges="-"
  fi
  ratio() { python3 -c "import sys
try: print(f'{float(sys.argv[1]) / max(float(sys.argv[2]), 1e-4):,.0f}x')
except ValueError: print('-')" "$1" "$2"; }
  agree=""
  for peer in "$tred_edges" "$nx_edges"; do
    [ "$peer" = "-" ] || [ "$peer" = "$ours" ] || agree=" (DISAGREE)"
  done
  echo "| $n | $edges | $ours / $tred_edges / $nx_edges$agree | $reduce | $total | $tred_s | $nx_s | $(ratio "$tred_s" "$total") | $(ratio "$nx_s" "$reduce") |"
done

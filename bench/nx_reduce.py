#!/usr/bin/env python3
"""networkx's transitive_reduction on an edge list from gen.py --edges.

Prints the reduced edge count and the seconds the reduction took (reading
the file is not timed)."""
import sys
import time

import networkx as nx

with open(sys.argv[1]) as f:
    n = int(f.readline())
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(tuple(map(int, line.split())) for line in f)
start = time.perf_counter()
reduced = nx.transitive_reduction(g)
print(reduced.number_of_edges(), f"{time.perf_counter() - start:.3f}")

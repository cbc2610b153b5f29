"""Writes a pipeline whose redundant-dependency check would need more work
than its budget: K sources, a hub on all of them, a chain of K stages after
the hub, and a sink on the chain's tail and every source (each source
dependency of the sink is redundant, and every clock along the chain holds
all K sources)."""
import sys

k = int(sys.argv[1])
out = ["pipeline wide {", "  stream s;"]
for i in range(k):
    out.append(f"  stage Src{i} on s kernel 1us;")
sources = ", ".join(f"Src{i}" for i in range(k))
out.append(f"  stage Hub on s kernel 1us depends_on({sources});")
prev = "Hub"
for i in range(k):
    out.append(f"  stage C{i} on s kernel 1us depends_on({prev});")
    prev = f"C{i}"
out.append(f"  stage Sink on s kernel 1us depends_on({prev}, {sources});")
out.append("}")
print("\n".join(out))

"""Two schedule JSON documents describe the same schedule (the source aside)."""
import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("source"), b.pop("source")
assert a == b, "the schedules differ"

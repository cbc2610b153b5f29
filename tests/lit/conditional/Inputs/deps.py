"""Each instance of a `compile --emit=json` schedule with its dependencies,
declared and inferred, by instance name: `B[3] <- A[0] C[3]`."""
import json
import sys

doc = json.load(sys.stdin)
for p in doc["pipelines"]:
    names = {s["id"]: s["instance"] for s in p["stages"]}
    for s in p["stages"]:
        ids = set(s["depends_on"]) | {d["stage"] for d in s["inferred_from"]}
        deps = sorted(names[d] for d in ids)
        print(f"{s['instance']} <- {' '.join(deps)}".rstrip())

"""compile --emit=json's stages, the first eight: what each reads or
writes of 'act' (slot), and its dependencies with the buffer they come
from."""
import json
import sys

p = json.load(sys.stdin)["pipelines"][0]
stages = p["stages"]
for st in stages[:8]:
    acc = [("reads", a) for a in st["reads"] if a["buffer"] == "act"] + \
          [("writes", a) for a in st["writes"] if a["buffer"] == "act"]
    what = ", ".join(f"{k} act slot {a['slot']}" for k, a in acc)
    deps = [f"{stages[d]['instance']}" for d in st["depends_on"]]
    deps += [f"{stages[d['stage']]['instance']} ({d['buffer']})"
             for d in st["inferred_from"] if d["buffer"] == "act"]
    print(f"{st['instance']} {what}; depends on {', '.join(deps)}".rstrip())

"""Two compile --emit=json outputs of one periodic pipeline, the second
`extra` iterations longer (and long enough that the graph verdict's model
skipped ahead in it): in each lowering the replay must grow by what one
iteration takes on average in the shorter one, simulated whole, to 1e-4
(the average also holds the first iterations, before the replay settled)."""
import json
import sys

short, long_ = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
extra = int(sys.argv[3])
a = short["pipelines"][0]["analysis"]["graph_advice"]
b = long_["pipelines"][0]["analysis"]["graph_advice"]
iterations = short["pipelines"][0]["iterations"]
for key, name in (("streams_replay_us", "streams"), ("graph_replay_us", "graph")):
    growth = (b[key] - a[key]) / extra
    per = a[key] / iterations
    same = abs(growth - per) <= 1e-4 * per
    print(f"{name}: {'same' if same else 'different'} per iteration "
          f"({growth:.6f} against {per:.6f} us)")

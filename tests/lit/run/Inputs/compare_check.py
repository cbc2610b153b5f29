"""run --compare's table against the two runs made on their own: each
file's makespan and replay (run --json) are the A and B columns, and B - A
is their difference, to the 0.1 us the table shows."""
import json
import re
import sys

table = open(sys.argv[1]).read()
a = json.load(open(sys.argv[2]))["pipelines"][0]
b = json.load(open(sys.argv[3]))["pipelines"][0]


def us(text):
    value, unit = text.split()
    return float(value) * {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}[unit]


for label, key in (("makespan", "makespan_us"), ("replay", None)):
    m = re.search(rf"^  {label} +([\d.]+ \w+) +([\d.]+ \w+) +([-+]?[\d.]+ \w+|0)", table, re.M)
    ta, tb = us(m.group(1)), us(m.group(2))
    diff = 0 if m.group(3) == "0" else us(m.group(3).lstrip("+"))
    ja = a["makespan_us"] if key else a["timings_us"]["replay_median"]
    jb = b["makespan_us"] if key else b["timings_us"]["replay_median"]
    assert abs(ta - ja) <= 0.05 and abs(tb - jb) <= 0.05, (label, ta, ja, tb, jb)
    assert abs(diff - (jb - ja)) <= 0.1, (label, diff, jb - ja)
    print(f"{label}: A, B and B - A as the runs on their own")

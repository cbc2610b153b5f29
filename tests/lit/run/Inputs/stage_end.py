"""Prints the end time of the named stage instance from a run result."""
import json
import sys

result = json.load(sys.stdin)
for stage in result["pipelines"][0]["stages"]:
    if stage["instance"] == sys.argv[1]:
        print(stage["end_us"])
        break
else:
    sys.exit("no stage " + sys.argv[1])

"""Each stage's start and time on a run's JSON (stdin): 'NAME +START DURATION'."""
import json, sys

for s in json.load(sys.stdin)["pipelines"][0]["stages"]:
    print(f"{s['instance']} +{s['start_us']:.1f} {s['end_us'] - s['start_us']:.1f}")

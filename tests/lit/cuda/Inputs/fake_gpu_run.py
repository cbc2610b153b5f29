"""Writes the files a gpu-check run leaves in its work folder, made up, for
the summary's test."""
import json
import os
import sys

work = sys.argv[1]


def write(name, value):
    with open(os.path.join(work, name), "w") as f:
        json.dump(value, f)


def pipeline(replay, makespan, timing, notes=()):
    return {"name": "infer", "lowering": "streams", "timing": timing,
            "timings_us": {"replay_median": replay, "replay_p95": replay * 1.1},
            "makespan_us": makespan, "dependency_violations": 0,
            "stages": [], "notes": list(notes)}


write("cuda-seed.json", {"pipelines": [pipeline(100.0, 90.0, "cupti",
                                                ["CUPTI loaded from /x/libcupti.so.13"])]})
write("sim-seed.json", {"pipelines": [pipeline(110.0, 95.0, "model")]})
write("default-profile.json", {"launch_us": 2.6, "host_func_latency_us": 100,
                               "copy_engines_h2d": 1})
write("profile.json", {"launch_us": 2.6, "host_func_latency_us": 12.5,
                       "copy_engines_h2d": 2})

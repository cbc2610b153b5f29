"""What an import report claims, checked on one trace: the imported
program's predicted span (host included) and its median op-end error
(the free run's, the fidelity the report heads with) are close to the recording (within the percentages given); the lower
bound does not exceed the predicted replays; and the graph verdict is the one
`pipec run --lower=both` and `pipec compile` give for the imported file on
the same profile."""
import json
import os
import subprocess
import sys

trace, tmp = sys.argv[1], sys.argv[2]
span_tolerance, error_tolerance = float(sys.argv[3]), float(sys.argv[4])
pipe, profile = tmp + ".pipe", tmp + ".profile.json"


def pipec(*args):
    return subprocess.run(["pipec", *args], check=True, capture_output=True, text=True).stdout


report = json.loads(pipec("import", trace, "--json", "-o", pipe, "--profile-out=" + profile))
rec, pred, fid = report["recorded"], report["predicted"], report["fidelity"]
span = rec["span_us"]
assert abs(pred["streams_makespan_us"] / span - 1) <= span_tolerance, (pred, span)
assert fid["median_op_end_error_us"] <= error_tolerance * span, (fid, span)
# One run is the headline: the fidelity figures are those of the free run.
assert fid["run"] == "free" and fid["replayed_span_us"] == pred["streams_makespan_us"], report
# The bound holds the whole run, the host's work before the first launch
# and after the last call included: no replay (host's first call to last
# end) is shorter, in either lowering.
assert report["analysis"]["lower_bound_us"] <= pred["streams_replay_us"] + 1e-6, report
assert report["analysis"]["lower_bound_us"] <= pred["graph_replay_us"] + 1e-6, report
run = json.loads(pipec("run", pipe, "--backend=sim", "--profile=" + profile, "--lower=both",
                       "--json"))["pipelines"][0]["comparison"]
compiled = json.loads(pipec("compile", pipe, "--profile=" + profile,
                            "--emit=json"))["pipelines"][0]["analysis"]["graph_advice"]
assert run["break_even_replays"] == pred["break_even_replays"], (run, pred)
assert compiled["break_even_replays"] == pred["break_even_replays"], (compiled, pred)
print(os.path.basename(trace), "agrees with the recording and with run and compile")

"""Imports every trace in a folder (random_traces.py's): each is refused with
a clear error (exit 1, "pipec: error:", no file written) or written as a file
that `pipec check` passes without an error or a warning (but that its streams
outnumber the hardware queues, as the recording's did), with the recorded
GPU's profile and with the default one.

  check_random.py FOLDER OUT_DIR
"""
import glob
import os
import subprocess
import sys

folder, out = sys.argv[1], sys.argv[2]
clean = refused = 0
for trace in sorted(glob.glob(os.path.join(folder, "*.json"))):
    pipe = os.path.join(out, os.path.basename(trace) + ".pipe")
    profile = pipe + ".profile.json"
    r = subprocess.run(["pipec", "import", trace, "-o", pipe, "--profile-out=" + profile],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        assert r.returncode == 1 and r.stderr.startswith("pipec: error:"), (trace, r.stderr)
        assert not os.path.exists(pipe) and not os.path.exists(profile), trace
        refused += 1
        continue
    for extra in ([], ["--profile=" + profile]):
        c = subprocess.run(["pipec", "check", pipe] + extra, capture_output=True, text=True)
        warnings = [l for l in c.stderr.splitlines()
                    if ": warning: " in l and "hardware queues" not in l]
        assert c.returncode == 0 and not warnings, (trace, extra, c.stderr[:2000])
    clean += 1
print(f"{clean + refused} traces: {clean} written as files that check clean, {refused} refused")
assert clean >= refused // 2, "the generator should reach what is accepted too"

"""Every trace in a folder (*.json, *.json.gz; Nsight Systems exports, *.sqlite,
there or in its nsys/ folder) imports, at its default step,
to a file that `pipec check` passes without a warning: the real kernels of
recorded traces (1-2 us kernels of several waves among them) are none that
sema calls implausible."""
import glob
import os
import subprocess
import sys

folder = sys.argv[1]
traces = sorted(glob.glob(os.path.join(folder, "*.json")) + glob.glob(os.path.join(folder, "*.json.gz")))
traces += sorted(glob.glob(os.path.join(folder, "*.sqlite")) +
                 glob.glob(os.path.join(folder, "nsys", "*.sqlite")))
for trace in traces:
    pipe = subprocess.run(["pipec", "import", trace], check=True, capture_output=True, text=True).stdout
    check = subprocess.run(["pipec", "check", "-"], input=pipe, capture_output=True, text=True)
    assert check.returncode == 0 and "warning" not in check.stderr, (trace, check.stderr[:2000])
print(len(traces), "traces import to files that check clean")

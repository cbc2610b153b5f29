"""The import of several ranks, held to what the ranks recorded.

  check_ranks.py PIPEC MAKE_RANKS WORKDIR

For 2, 3, 4 and 8 ranks (each later rank's host slower, so it joins each
collective later and the others wait inside the NCCL kernel), with and
without an all-reduce only the last rank has: the imported file checks
clean with no warning and is in fmt's layout; `--report --json` says the
collectives were matched (2), the extra one left unmatched, the ranks on
one clock; the model keeps every ordering, no bound exceeds its run, and
each rank's span and the step's land within 2% of the recording. With
--apart (rank 1's clock a second off) the ranks are not aligned and say
so. Prints one line per case; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys

pipec, make, work = sys.argv[1:4]
failed = 0


def fail(case, why):
    global failed
    failed += 1
    print(f"FAIL {case}: {why}")


for ranks in (2, 3, 4, 8):
    for flags in ([], ["--extra-collective"], ["--apart"]):
        case = f"{ranks} ranks {' '.join(flags)}".strip()
        d = os.path.join(work, f"ranks-{ranks}-{'-'.join(f.strip('-') for f in flags)}")
        os.makedirs(d, exist_ok=True)
        files = subprocess.run([sys.executable, make, d, str(ranks)] + flags, check=True,
                               capture_output=True, text=True).stdout.split()
        pipe = os.path.join(d, "step.pipe")
        imp = subprocess.run([pipec, "import", *files, "-o", pipe], capture_output=True,
                             text=True)
        if imp.returncode != 0:
            fail(case, f"import failed: {imp.stderr}")
            continue
        check = subprocess.run([pipec, "check", pipe], capture_output=True, text=True)
        if check.returncode != 0 or "warning" in check.stderr:
            fail(case, f"the file does not check clean: {check.stderr}")
        if subprocess.run([pipec, "fmt", "--check", pipe], capture_output=True).returncode:
            fail(case, "the file is not in fmt's layout")
        rep = json.loads(subprocess.run([pipec, "import", *files, "--json"], check=True,
                                        capture_output=True, text=True).stdout)
        if rep["collectives"] != 2:
            fail(case, f"{rep['collectives']} collectives matched, not 2")
        want_unmatched = 1 if "--extra-collective" in flags else 0
        if rep["unmatched_collective_kernels"] != want_unmatched:
            fail(case, f"{rep['unmatched_collective_kernels']} unmatched, not {want_unmatched}")
        if rep["one_clock"] != ("--apart" not in flags):
            fail(case, f"one_clock is {rep['one_clock']}")
        if rep["dependency_violations"]:
            fail(case, f"{rep['dependency_violations']} dependency violations")
        if rep["lower_bound_us"] > rep["predicted_makespan_us"] + 1e-6:
            fail(case, "the lower bound exceeds the model's run")
        worst = 0.0
        # Traces on no common clock: each rank starts at once, and a rank
        # that waited for a later one inside a collective is not modelled
        # waiting; only the structure is checked.
        for r in rep["ranks"] if "--apart" not in flags else []:
            err = abs(r["predicted_span_us"] - r["recorded_span_us"]) / r["recorded_span_us"]
            worst = max(worst, err)
            if err > 0.02:
                fail(case, f"{r['device']}: model {r['predicted_span_us']} us against "
                           f"{r['recorded_span_us']} us recorded")
        if "--apart" not in flags:
            err = abs(rep["predicted_span_us"] - rep["recorded_span_us"]) / rep["recorded_span_us"]
            worst = max(worst, err)
            if err > 0.02:
                fail(case, f"step: model {rep['predicted_span_us']} us against "
                           f"{rep['recorded_span_us']} us recorded")
        print(f"{case}: worst span error {100 * worst:.1f}%")
print("ranks:", "ok" if not failed else f"{failed} failure(s)")
sys.exit(1 if failed else 0)

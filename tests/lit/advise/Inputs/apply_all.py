"""Every suggestion advise makes on every given .pipe file, applied with
--apply: the file written checks without a warning the original did not
have, computes what the original does (check --against), and gives the
objective announced (within 1%) when run. Files that do not check clean
are skipped. Prints one line per file with suggestions, and a total."""
import json
import os
import subprocess
import sys
import tempfile

out = tempfile.mkdtemp()


def pipec(*args, check=True):
    r = subprocess.run(["pipec", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"pipec {' '.join(args)} failed:\n{r.stderr}")
    return r


files = []
for arg in sys.argv[1:]:
    if os.path.isdir(arg):
        for root, _, names in os.walk(arg):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".pipe")]
    else:
        files.append(arg)
total = 0
for path in sorted(files):
    checked = pipec("check", path, check=False)
    if checked.returncode != 0:
        continue
    warnings = set(line for line in checked.stderr.splitlines() if "warning:" in line)
    advised = pipec("advise", path, "--backend=sim", "--json", check=False)
    if advised.returncode != 0 and "devices; 'pipec advise' takes pipelines on one" in advised.stderr:
        continue  # several devices: advise refuses them, and says so
    if advised.returncode != 0:
        sys.exit(f"pipec advise {path} failed:\n{advised.stderr}")
    advice = json.loads(advised.stdout)
    number = 0
    for p in advice["pipelines"]:
        for s in p["suggestions"]:
            number = s["number"]
            if s["lowering"] == "graph":
                continue
            if "environment" in s:
                # A setting, not an edit: the model with that many hardware
                # queues gives the figure announced.
                count = int(s["environment"].split("=", 1)[1])
                profile = os.path.join(out, f"{total}.json")
                with open(profile, "w") as f:
                    json.dump({"hardware_queues": count}, f)
                run = json.loads(pipec("run", path, "--backend=sim", "--json",
                                       f"--profile={profile}",
                                       f"--pipeline={p['name']}").stdout)["pipelines"][0]
                assert abs(run["makespan_us"] - s["after_us"]) <= 0.01 * s["after_us"], (path, s)
                total += 1
                continue
            applied = os.path.join(out, f"{total}.pipe")
            pipec("advise", path, "--backend=sim", f"--apply={number}", "-o", applied)
            again = pipec("check", applied, check=False)
            assert again.returncode == 0, (path, number, again.stderr)
            # Warnings name the file: compare what follows the location.
            new = set(w.split(" warning: ", 1)[1] for w in again.stderr.splitlines()
                      if "warning:" in w)
            old = set(w.split(" warning: ", 1)[1] for w in warnings)
            assert new <= old, (path, number, new - old)
            pipec("check", applied, f"--against={path}")
            run = json.loads(pipec("run", applied, "--backend=sim", "--json",
                                   f"--pipeline={p['name']}").stdout)["pipelines"][0]
            got = run["makespan_us"]
            assert abs(got - s["after_us"]) <= 0.01 * s["after_us"], (path, number, got, s)
            total += 1
    if number:
        print(f"{os.path.basename(path)}: {number} suggestion(s) checked")
print(f"{total} suggestion(s) applied: each checks, computes the same and runs as announced")

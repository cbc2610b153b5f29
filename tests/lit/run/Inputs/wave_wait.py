"""An urgent kernel behind a low-priority grid of W waves (W from argv):
it waits only for the wave in flight, T/W, whatever W is. Writes the file,
runs it on the model and checks the urgent kernel's start against the next
wave boundary after it is ready."""
import json, math, subprocess, sys

pipec, waves = sys.argv[1], int(sys.argv[2])
# 8 blocks of 256 threads fill an SM (2048 threads), 132 SMs: a wave is
# 1056 blocks; the big grid takes 1 ms alone.
text = f"""pipeline p {{
  stream low priority low;
  stream high priority high;
  stage Big on low kernel 1ms [blocks={1056 * waves}, threads=256];
  stage Urgent on high kernel 5us [blocks=132, threads=256, issue=301us];
}}
"""


def starts(program):
    run = json.loads(subprocess.run([pipec, "run", "-", "--backend=sim", "--json"],
                                    input=program, capture_output=True, text=True,
                                    check=True).stdout)
    return {s["instance"]: s["start_us"] for s in run["pipelines"][0]["stages"]}


# When the urgent kernel reaches the device: its start beside a grid that
# ends at once (the same calls on the host).
ready = starts(text.replace(f"1ms [blocks={1056 * waves}", "1us [blocks=1"))["Urgent"]
start = starts(text)["Urgent"]
wave = 1000.0 / waves
boundary = math.ceil(ready / wave - 1e-9) * wave
assert abs(start - boundary) < 1e-6, (waves, ready, start, boundary)
print(f"{waves} waves of {wave:.4f} us: ready at {ready:.4f} us, starts at the wave's end "
      f"{start:.4f} us")

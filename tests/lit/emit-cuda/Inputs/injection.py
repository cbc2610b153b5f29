"""A source file whose name holds newlines and C++ stays a comment in the
emitted program: nothing of the name is compiled."""
import os
import subprocess
import sys

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
name = os.path.join(work, 'x\n#error injected\nint pwned = 1; \\')
with open(name, "w") as f:
    f.write("pipeline p { stream s; stage K on s kernel 1us; }\n")
out = subprocess.run(["pipec", "compile", name, "--emit=cuda"], check=True,
                     capture_output=True, text=True).stdout
lines = out.splitlines()
assert not any(l.startswith("#error") or l.startswith("int pwned") for l in lines), lines[:3]
print(lines[0])

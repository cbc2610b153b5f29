"""File names with terminal escapes in them: in a diagnostic, in "cannot
read", in fmt --check, pipec shows them escaped and sends no control byte."""
import os
import subprocess
import sys

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
name = os.path.join(work, "x\x1b]0;owned\x07\x1b[2Jy.pipe")
open(name, "w").write("pipeline p {\n  stage A on nowhere kernel 1us;\n}\n")
unformatted = os.path.join(work, "u\x1b[31m.pipe")
open(unformatted, "w").write("pipeline p { stage A kernel 1us; }\n")
rank = os.path.join(work, "rank\x1b]0;owned\x07.json")
open(rank, "w").write("not json")
trace = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "import", "Inputs",
                     "nccl-rank.json")
plain = os.path.join(work, "plain.pipe")
open(plain, "w").write("pipeline p {\n  stream s;\n  stage A on s kernel 1us;\n}\n")
for args in (["check", name], ["check", name + ".missing"], ["fmt", "--check", unformatted],
             ["compile", unformatted, "--pipeline=\x1b[2J"],
             ["run", plain, "--backend=sim", "--objective=end:\x1b]0;x\x07"],
             ["advise", plain, "--backend=sim", "--objective=end:B\x1b[2J"],
             ["compile", plain, "--emit=\x1b[2J"],
             ["compile", plain, b"--bogus\xc2\x9b2J"],
             ["advise", plain, "--backend=sim", "--apply=x\x1b"],
             ["compile", plain, "--bogus"],
             ["import", trace, rank]):
    r = subprocess.run(["pipec", *args], capture_output=True)
    out = r.stdout + r.stderr
    clean = b"\x1b" not in out and b"\x07" not in out
    print(args[0], "exit", r.returncode, "clean" if clean else "RAW ESCAPES",
          out.decode(errors="replace").strip().split("\n")[0])

"""Every output against every input and every other output, whatever names
them: the same file by another name, through a link, as standard input;
two outputs to one file; links that dangle or loop. Each case prints one
line; a refusal is exit status 2 and leaves every file as it was."""
import os
import shutil
import subprocess
import sys

work = sys.argv[1]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
samples = sys.argv[2]
trace = sys.argv[3]
os.chdir(work)
shutil.copy(os.path.join(samples, "seed.pipe"), "seed.pipe")
shutil.copy(trace, "t.json")
subprocess.run(["pipec", "profile", "--default"], stdout=open("p.json", "w"), check=True)
before = {f: open(f, "rb").read() for f in os.listdir(".")}


def pipec(*args, stdin=None):
    r = subprocess.run(["pipec", *args], capture_output=True, text=True,
                       stdin=open(stdin) if stdin else None)
    return r.returncode, r.stderr.strip().split("\n")[-1] if r.stderr else ""


def refused(label, *args, stdin=None):
    code, err = pipec(*args, stdin=stdin)
    unchanged = all(open(f, "rb").read() == data for f, data in before.items())
    print(f"{label}: exit {code}, {'unchanged' if unchanged else 'CHANGED'}: {err}")


refused("import over its trace", "import", "t.json", "-o", "t.json")
refused("profile-out over the trace", "import", "t.json", "--profile-out=t.json", "-o", "x.pipe")
refused("profile-out and -o one file", "import", "t.json", "--profile-out=y", "-o", "y")
refused("html over the profile", "run", "seed.pipe", "--profile=p.json", "--html=p.json")
refused("-o over the profile", "run", "seed.pipe", "--profile=p.json", "-o", "./p.json")
refused("trace and html and -o one file", "run", "seed.pipe", "--trace=z", "--html=z", "-o", "z")
refused("trace and -o both stdout", "run", "seed.pipe", "--trace=-")
refused("stdin redirected from the output", "compile", "-", "-o", "seed.pipe", stdin="seed.pipe")
os.symlink("seed.pipe", "alias.pipe")
refused("output through a link to the input", "compile", "seed.pipe", "-o", "alias.pipe")
os.symlink("loop-a", "loop-b")
os.symlink("loop-b", "loop-a")
refused("a symlink loop", "compile", "seed.pipe", "-o", "loop-a")
os.symlink("made.json", "dangling")
code, _ = pipec("compile", "seed.pipe", "--emit=json", "-o", "dangling")
print(f"a dangling link: exit {code}, link kept: {os.path.islink('dangling')}, "
      f"target written: {open('made.json').read().startswith('{')}")

"""Output files keep what a user expects: mode, owner, symbolic and hard
links; a read-only file is not rewritten; no signal leaves a temporary."""
import os
import signal
import stat
import subprocess
import sys
import time

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
src = os.path.join(work, "p.pipe")
open(src, "w").write("pipeline p { stage A kernel 1us; }\n")


def compile_to(path):
    return subprocess.run(["pipec", "compile", src, "--emit=json", "-o", path],
                          capture_output=True, text=True)


# Mode kept.
out = os.path.join(work, "mode.json")
open(out, "w").write("old")
os.chmod(out, 0o640)
assert compile_to(out).returncode == 0
assert stat.S_IMODE(os.stat(out).st_mode) == 0o640, oct(os.stat(out).st_mode)
print("mode kept")

# A symbolic link is written through: still a link, its target updated.
target = os.path.join(work, "target.json")
link = os.path.join(work, "link.json")
open(target, "w").write("old")
if os.path.lexists(link):
    os.remove(link)
os.symlink(target, link)
assert compile_to(link).returncode == 0
assert os.path.islink(link) and open(target).read().startswith("{")
print("symlink written through")

# Hard links: both names see the new contents.
a, b = os.path.join(work, "a.json"), os.path.join(work, "b.json")
for f in (a, b):
    if os.path.exists(f):
        os.remove(f)
open(a, "w").write("old")
os.link(a, b)
assert compile_to(a).returncode == 0
assert open(b).read().startswith("{") and os.stat(a).st_ino == os.stat(b).st_ino
print("hard link kept")

# Read-only: refused, untouched (root ignores modes, so the check is pipec's).
ro = os.path.join(work, "ro.json")
if os.path.exists(ro):
    os.chmod(ro, 0o644)
open(ro, "w").write("keep")
os.chmod(ro, 0o444)
r = compile_to(ro)
assert r.returncode == 4 and "read-only" in r.stderr, (r.returncode, r.stderr)
assert open(ro).read() == "keep"
print("read-only refused")

# Any signal that ends the process while a large output is written: no
# temporary left behind (LLVM's handlers know SIGINT and SIGTERM; pipec
# writes into an unnamed file, and handles the rest where it cannot).
big = os.path.join(work, "big.pipe")
open(big, "w").write("pipeline big { iterations 500000; stream s; stage A on s kernel 1us; "
                     "stage B on s kernel 1us depends_on(A); }\n")
dest = os.path.join(work, "big.json")


def written(pid):
    """Bytes the process has written so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("wchar"))
    except OSError:
        return 0


for name in ("SIGINT", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGPWR", "SIGSTKFLT", "SIGUSR1"):
    # As a shell starts it: lit's own runner ignores SIGINT, and an ignored
    # signal stays ignored across exec.
    p = subprocess.Popen(["pipec", "compile", big, "--emit=json", "-o", dest],
                         stderr=subprocess.DEVNULL,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # The signal comes once the output is being written (365 MB: it takes a
    # while), or after a second where /proc cannot say.
    deadline = time.time() + (1.0 if not os.path.exists(f"/proc/{p.pid}/io") else 60)
    while p.poll() is None and written(p.pid) == 0 and time.time() < deadline:
        time.sleep(0.01)
    p.send_signal(getattr(signal, name))
    p.wait()
    assert p.returncode != 0, (name, "finished before the signal")
    left = [f for f in os.listdir(work) if ".tmp-" in f]
    assert not left, (name, left)
    print("no temporary after", name)

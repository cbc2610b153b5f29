#!/usr/bin/env python3
"""Runs the commands of docs/tutorial.md and checks (or, with --update,
rewrites) the output shown under each one.

A console block is a fenced block whose first line is '$ COMMAND'; the rest
of the block is what COMMAND prints. Commands run in the repository root
with build/pipec (or $PIPEC) first on the PATH.

  scripts/tutorial.py [--update] [docs/tutorial.md]
"""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if a != "--update"]
update = "--update" in sys.argv
path = args[0] if args else os.path.join(root, "docs", "tutorial.md")
pipec = os.environ.get("PIPEC", os.path.join(root, "build", "pipec"))
env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(pipec)) + os.pathsep + os.environ["PATH"])

text = open(path).read()
block = re.compile(r"```console\n\$ (.*?)\n(.*?)```", re.S)
failures = 0
count = 0


def run(match):
    global failures, count
    command, shown = match.group(1), match.group(2)
    out = subprocess.run(["bash", "-c", command], cwd=root, env=env,
                         capture_output=True, text=True).stdout
    count += 1
    if out != shown and not update:
        failures += 1
        sys.stderr.write(f"--- output of '{command}' differs:\n"
                         f"--- shown\n{shown}--- actual\n{out}")
    return f"```console\n$ {command}\n{out}```"


new = block.sub(run, text)
if update:
    open(path, "w").write(new)
print(f"{count} commands, {failures} differ")
sys.exit(1 if failures else 0)

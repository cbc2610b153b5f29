"""Builds emitted CUDA programs with nvcc as one binary, to pay nvcc's front
end (three quarters of a build: the CUDA headers, parsed three times) once
instead of once per program.

Each program is included in a namespace of its own, its `main` renamed, its
macros undefined after it; the system headers every program includes come
first, at global scope, so that the includes inside the namespaces are empty.
`BINARY NAME ARGS...` runs the program NAME (its file's name without `.cu`).
A program's error names its own file and line: the include keeps them.

A program that builds only this way could still miss an include of its own;
the callers also build one program alone, as its header says to.

    together.py OUT.cu BINARY PROGRAM.cu...    (exit: nvcc's)
"""
import os
import re
import shutil
import subprocess
import sys

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
# As the emitted header says: the architecture of the GPUs the project uses.
# Warnings are errors, the host compiler's -Wall -Wextra among them: a user
# who builds the emitted program with them sees none.
FLAGS = ["-O2", "-arch=sm_90", "-Xcompiler=-Wall,-Wextra,-Werror", "-Werror", "all-warnings"]


def name_of(path):
    return re.sub(r"\W", "_", os.path.basename(path)[:-3])


def write(out, programs):
    system, names = [], []
    for path in programs:
        text = open(path).read()
        for line in re.findall(r"^#include <[^>]+>$", text, re.M):
            if line not in system:
                system.append(line)
    lines = ["// Built by tests/lit/emit-cuda/Inputs/together.py", *system, ""]
    for path in programs:
        name = name_of(path)
        assert name not in names, f"two programs named {name}"
        names.append(name)
        macros = sorted(set(re.findall(r"^#define (\w+)", open(path).read(), re.M)))
        lines += [f"#define main main_{name}", f"namespace program_{name} {{",
                  f'#include "{os.path.abspath(path)}"', "}", "#undef main"]
        lines += [f"#undef {m}" for m in macros]
        lines.append("")
    lines += ["#include <cstring>", "int main(int argc, char **argv) {"]
    for name in names:
        lines.append(f'  if (argc > 1 && std::strcmp(argv[1], "{name}") == 0)')
        lines.append(f"    return program_{name}::main_{name}(argc - 1, argv + 1);")
    lines += ['  std::fprintf(stderr, "no such program\\n");', "  return 2;", "}", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


def build(out, binary, programs, alone=False):
    """nvcc's result; with alone, the programs are built one by one."""
    if alone:
        return [subprocess.run([NVCC, *FLAGS, "-o", p[:-3], p], capture_output=True,
                               text=True) for p in programs]
    write(out, programs)
    return [subprocess.run([NVCC, *FLAGS, "-o", binary, out], capture_output=True,
                           text=True)]


if __name__ == "__main__":
    if not shutil.which(NVCC):
        print("no nvcc: not built")
        sys.exit(0)
    out, binary, *programs = sys.argv[1:]
    result = build(out, binary, programs)[0]
    sys.stderr.write(result.stderr[-4000:])
    sys.exit(result.returncode)

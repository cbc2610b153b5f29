# lit configuration for pipec's end-to-end tests (.pipe and .test files).
import os

import lit.formats

config.name = "pipec"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".pipe", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "check_emitted.py", "same_schedule.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pipec_obj_root, "tests", "lit")

# pipec first, then FileCheck and not from LLVM 14.
path = os.pathsep.join([config.pipec_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
# scripts/update-figures asks FileCheck for the whole input it saw.
if "FILECHECK_OPTS" in os.environ:
    config.environment["FILECHECK_OPTS"] = os.environ["FILECHECK_OPTS"]
import sys
config.substitutions.append(("%python", sys.executable))
import shutil
if shutil.which("chromium"):
    config.available_features.add("chromium")
if shutil.which("bash"):
    config.available_features.add("bash")
if shutil.which("ldd"):
    config.available_features.add("ldd")
if shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")

# 'cuda' when a GPU answers: tests marked "REQUIRES: cuda" run only then.
import subprocess
try:
    probe = subprocess.run(
        [os.path.join(config.pipec_tools_dir, "pipec"), "run", "-", "--backend=cuda",
         "--replays=1"],
        input=b"pipeline probe { stage K kernel 1us; }", capture_output=True, timeout=120)
    if probe.returncode == 0:
        config.available_features.add("cuda")
except (OSError, subprocess.TimeoutExpired):
    pass
config.substitutions.append(("%pipec_binary", os.path.join(config.pipec_tools_dir, "pipec")))
config.substitutions.append(("%samples", os.path.join(config.pipec_src_root, "samples")))

# Real profiler traces, when a folder of them is given (PIPEC_TRACES):
# tests marked "REQUIRES: real-traces" run only then, and say so otherwise.
traces = os.environ.get("PIPEC_TRACES")
if traces and os.path.isdir(traces):
    config.available_features.add("real-traces")
    config.substitutions.append(("%traces", os.path.abspath(traces)))
config.substitutions.append(("%bench", os.path.join(config.pipec_src_root, "bench")))
config.substitutions.append(("%pipec_build", config.pipec_tools_dir))
config.substitutions.append(("%src_root", config.pipec_src_root))
if shutil.which("clang-format-14"):
    config.available_features.add("clang-format-14")

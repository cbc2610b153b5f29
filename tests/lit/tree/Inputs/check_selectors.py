"""Every test selector the docs give selects tests: each `ctest ... -R 'X'`
in README.md and docs/*.md names at least one ctest entry of the build, and
each `-tc='X'` (not a placeholder in capitals) at least one doctest case.

  check_selectors.py SRC_ROOT BUILD_DIR
"""
import glob
import os
import re
import subprocess
import sys

root, build = sys.argv[1], sys.argv[2]
docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
bad, checked = [], 0
for doc in docs:
    text = open(doc).read()
    for m in re.finditer(r"ctest[^`\n]*?-R '([^']+)'", text):
        pattern = m.group(1)
        out = subprocess.run(["ctest", "--test-dir", build, "-N", "-R", pattern],
                             capture_output=True, text=True).stdout
        total = re.search(r"Total Tests: (\d+)", out)
        checked += 1
        if not total or int(total.group(1)) == 0:
            bad.append(f"{os.path.relpath(doc, root)}: ctest -R '{pattern}' selects no test")
    for m in re.finditer(r"-tc='([^']+)'", text):
        pattern = m.group(1)
        if re.search(r"[A-Z]{3,}", pattern):  # a placeholder: NAME*
            continue
        out = subprocess.run([os.path.join(build, "tests", "pipec-unit-tests"), "-ltc",
                              "-tc=" + pattern], capture_output=True, text=True).stdout
        cases = re.search(r"\[doctest\] unskipped test cases passing the current filters: (\d+)",
                          out)
        checked += 1
        if not cases or int(cases.group(1)) == 0:
            bad.append(f"{os.path.relpath(doc, root)}: -tc='{pattern}' selects no test case")
for line in bad:
    print(line)
print(f"selectors: {checked} checked, {len(bad)} select nothing")
sys.exit(1 if bad else 0)

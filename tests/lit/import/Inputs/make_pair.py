"""A hand-made before/after pair for bench/whatif-pairs.py's self-check:
a 64 MiB upload from pageable memory (the host held 20 ms), then the same
step with it pinned (2.7 ms, asynchronous), and the manifest whose edit
expresses the change. Not a measurement of any GPU: it checks the
script's arithmetic. make_pair.py DIR [--stale]: --stale writes an edit
that matches nothing in the import."""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_traces import Builder  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
b = Builder()
b.step(1, 0, 21000)
b.kernel('k_before', 7, 10, 20, 500.0)
b.memcpy('h2d pageable', 7, 200, 700, 20000.0, 64 << 20, call_dur=20470.0)
b.kernel('k_after', 7, 20680, 20710, 100.0)
b.write(os.path.join(out, 'before.json'))
b = Builder()
b.step(1, 0, 3600)
b.kernel('k_before', 7, 10, 20, 500.0)
b.memcpy('h2d', 7, 200, 520, 2700.0, 64 << 20)
b.kernel('k_after', 7, 220, 3230, 100.0)
b.write(os.path.join(out, 'after.json'))
edit = (r'copy h2d 20000us \[issue=([0-9.]+us), pageable\]', r'copy h2d 64MiB [issue=\1]')
if '--stale' in sys.argv:
    edit = (r'copy h2d 99us', 'copy h2d 1us')
json.dump({'pairs': [{'name': 'pin the upload (hand-made pair)', 'before': 'before.json',
                      'after': 'after.json', 'edits': [list(edit)]}]},
          open(os.path.join(out, 'pairs.json'), 'w'), indent=1)

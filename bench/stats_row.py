#!/usr/bin/env python3
"""Turns `pipec compile --stats` output (stdin) into one Markdown table row.

usage: stats_row.py SHAPE START END OUTPUT_FILE   (START, END: epoch seconds)
"""
import os
import re
import sys

shape, start, end, out = sys.argv[1:5]
seconds = float(end) - float(start)
s = sys.stdin.read()


def num(pattern):
    return re.search(pattern, s).group(1)


cells = [
    shape,
    num(r"(\d+) instances"),
    num(r"(\d+) declared edges"),
    num(r"(\d+) waits"),
    "%.3f" % (float(num(r"parse ([\d.]+)")) + float(num(r"check ([\d.]+)"))),
    num(r"unroll ([\d.]+)"),
    num(r"reduction ([\d.]+)"),
    num(r"events ([\d.]+)"),
    num(r"analysis ([\d.]+)"),
    num(r"emit ([\d.]+)"),
    "%.2f" % seconds,
    num(r"peak memory (\d+)"),
    "%.0f" % (os.path.getsize(out) / 1e6),
]
print("| " + " | ".join(cells) + " |")

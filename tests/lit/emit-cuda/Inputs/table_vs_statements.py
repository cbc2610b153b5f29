"""Holds an emitted program's call table to its statements: the same
program emitted both ways (--cuda-call-table-from=0 and the default) makes
the same calls, in the same order, with the same operands.

  table_vs_statements.py STATEMENTS.cu TABLE.cu

Prints how many calls agreed; exits 1 at the first that does not.
"""
import re
import sys

statements_cu, table_cu = sys.argv[1], sys.argv[2]


def stage_of(ident):
    """A stage's index from its identifier: kEmbed_0Launch -> 0."""
    return int(re.match(r"k\w*?_(\d+)(Launch|Issue|Bytes|Microseconds)?$", ident).group(1))


def place(text):
    text = text.strip()
    m = re.match(r"(?:static_cast<unsigned char \*>\()?b\.(declared|device2|device|host)\[(\d+)\]",
                 text)
    if m:
        return (m.group(1), int(m.group(2)))
    assert text == "nullptr", text
    return ("none", -1)


def stream_of(text):
    return int(re.search(r"stream\[(\d+)\]", text).group(1))


def bodies(path):
    """Each issuing function's body and its thread: `issue` (one thread), or
    `issue0`, `issue1`, ... (a host thread per device)."""
    text = open(path).read()
    found = [(int(m.group(1)), m.end()) for m in re.finditer(r"static void issue(\d+)\(", text)]
    if not found:
        found = [(0, text.index("static void issue("))]
    for thread, at in found:
        body = text[at:]
        yield thread, body[body.index("{\n") + 2:body.index("\n}\n")]


def from_statements(path):
    calls = []
    for thread, body in bodies(path):
        calls += [(thread,) + c for c in calls_of(body)]
    return calls


def calls_of(body):
    calls = []
    for line in body.splitlines():
        line = line.split(" // ")[0].strip()
        if not line or line.startswith("//") or line == "CHECK(cudaGetLastError());":
            continue
        if m := re.match(r"CHECK\(cudaSetDevice\((\d+)\)\);$", line):
            calls.append(("SetDevice", int(m.group(1))))
        elif m := re.match(r"spinHost\((k\w+Issue)\);$", line):
            calls.append(("Dispatch", stage_of(m.group(1))))
        elif m := re.match(r"spinHost\((k\w+Microseconds)\);$", line):
            calls.append(("Cpu", stage_of(m.group(1))))
        elif m := re.match(r"spin<<<\d+, \d+, (k\w+)\.sharedBytes, (stream\[\d+\])>>>\(k\w+\.nanoseconds, (.*)\);$", line):
            calls.append(("Kernel", stage_of(m.group(1)), stream_of(m.group(2)), place(m.group(3))))
        elif m := re.match(r"CHECK\(cudaMemcpyAsync\((.*), (.*), (k\w+Bytes), cudaMemcpy\w+, (stream\[\d+\])\)\);$", line):
            calls.append(("Copy", stage_of(m.group(3)), stream_of(m.group(4)), place(m.group(1)),
                          place(m.group(2))))
        elif m := re.match(r"CHECK\(cudaMemcpyPeerAsync\((.*), \d+, (.*), \d+, (k\w+Bytes), (stream\[\d+\])\)\);$", line):
            calls.append(("PeerCopy", stage_of(m.group(3)), stream_of(m.group(4)),
                          place(m.group(1)), place(m.group(2))))
        elif m := re.match(r"CHECK\(cudaMemsetAsync\((.*), 0, (k\w+Bytes), (stream\[\d+\])\)\);$", line):
            calls.append(("Memset", stage_of(m.group(2)), stream_of(m.group(3)), place(m.group(1))))
        elif m := re.match(r"CHECK\(cudaLaunchHostFunc\((stream\[\d+\]), hostSpin, &(k\w+Microseconds)\)\);$", line):
            calls.append(("HostFunc", stage_of(m.group(2)), stream_of(m.group(1))))
        elif m := re.match(r"NCCL_CHECK\(nccl\.\w+\(b\.send\[(\d+)\].*, (stream\[\d+\])\)\);$", line):
            calls.append(("Collective", int(m.group(1)), stream_of(m.group(2))))
        elif m := re.match(r"CHECK\(cudaEventRecord\(event\[(\d+)\], (stream\[\d+\])\)\);$", line):
            calls.append(("Record", int(m.group(1)), stream_of(m.group(2))))
        elif m := re.match(r"CHECK\(cudaStreamWaitEvent\((stream\[\d+\]), event\[(\d+)\], 0\)\);$", line):
            calls.append(("Wait", int(m.group(2)), stream_of(m.group(1))))
        elif m := re.match(r"(?:CHECK\(cudaEventSynchronize|waitEvent)\(event\[(\d+)\]\)\)?;$", line):
            calls.append(("Sync", int(m.group(1))))
        elif m := re.match(r"CHECK\(cudaGraphLaunch\(recorded\[(\d+)\], (stream\[\d+\])\)\);$", line):
            calls.append(("GraphLaunch", int(m.group(1)), stream_of(m.group(2))))
        elif m := re.match(r"post\((\d+), gen\);$", line):
            calls.append(("Post", int(m.group(1))))
        elif m := re.match(r"await\((\d+), gen\);$", line):
            calls.append(("Await", int(m.group(1))))
        elif line == "NCCL_CHECK(nccl.groupStart());":
            calls.append(("GroupStart",))
        elif line == "NCCL_CHECK(nccl.groupEnd());":
            calls.append(("GroupEnd",))
        else:
            sys.exit(f"table_vs_statements: a statement it does not know: {line}")
    return calls


OPS = ["SetDevice", "Dispatch", "Kernel", "Copy", "PeerCopy", "Memset", "HostFunc", "Collective",
       "Record", "Wait", "Sync", "Cpu", "GroupStart", "GroupEnd", "GraphLaunch", "Post",
       "Await"]
KINDS = ["declared", "device", "device2", "host", "none"]


def from_table(path):
    text = open(path).read()
    assert "static void issue(" in text and "for (const CallRow &c : kCalls)" in text, \
        "no call table"
    rows = text[text.index("const CallRow kCalls["):]
    rows = rows[:rows.index("};\n")]
    calls = []
    for m in re.finditer(r"\{(\d+), (\d+), (\d+), (\d+), (-?\d+), (-?\d+), (-?\d+), (-?\d+)\},",
                         rows):
        op, dk, sk, thread, stream, a, dst, src = map(int, m.groups())
        name = OPS[op]
        dst_p, src_p = (KINDS[dk], dst if dk != 4 else -1), (KINDS[sk], src if sk != 4 else -1)
        calls.append({
            "SetDevice": lambda: (name, a),
            "Dispatch": lambda: (name, a),
            "Cpu": lambda: (name, a),
            "Kernel": lambda: (name, a, stream, dst_p),
            "Copy": lambda: (name, a, stream, dst_p, src_p),
            "PeerCopy": lambda: (name, a, stream, dst_p, src_p),
            "Memset": lambda: (name, a, stream, dst_p),
            "HostFunc": lambda: (name, a, stream),
            "Collective": lambda: (name, a, stream),
            "Record": lambda: (name, a, stream),
            "Wait": lambda: (name, a, stream),
            "Sync": lambda: (name, a),
            "GroupStart": lambda: (name,),
            "GroupEnd": lambda: (name,),
            "GraphLaunch": lambda: (name, a, stream),
            "Post": lambda: (name, a),
            "Await": lambda: (name, a),
        }[name]())
        calls[-1] = (thread,) + calls[-1]
    # Each thread's calls in its order (the table holds them interleaved).
    return sorted(calls, key=lambda c: c[0])


a, b = from_statements(statements_cu), from_table(table_cu)
for i, (x, y) in enumerate(zip(a, b)):
    if x != y:
        sys.exit(f"table_vs_statements: call {i}: statement {x}, table row {y}")
if len(a) != len(b):
    sys.exit(f"table_vs_statements: {len(a)} statements, {len(b)} table rows")
kinds = sorted(set(c[1] for c in a))
print(f"{len(a)} calls agree: {', '.join(kinds)}")

"""A Kineto trace and the PyTorch execution trace recorded beside it, for
`pipec import --et`: one step on one stream, GPU-bound, whose 20 MiB input
upload sits between two kernels that do not touch it (the data lets a
side stream take it), and a kernel launched by a framework op the
execution trace does not hold (it keeps its orderings).

make_et.py OUTDIR [--link=rfid|external|align] [--schema=1.0|1.1]
  --link=rfid      Kineto's cpu_ops carry `Record function id` (recorded together)
  --link=external  only `External id`, equal to the execution trace's rf_id
  --link=align     ids that match nothing: two iterations, linked by the op sequence
  --unlinked=N     N more kernels launched outside any op the execution trace has
  --race           add_d runs on stream 9 as the upload it reads still runs: a
                   race the recording shows (or memory the allocator handed on)
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_traces import Builder  # noqa: E402

args = dict((a[2:].split('=', 1) + [''])[:2] for a in sys.argv[2:] if a.startswith('--'))
out = sys.argv[1]
link = args.get('link', 'rfid')
schema = args.get('schema', '1.1')
unlinked = int(args.get('unlinked', '0'))
race = 'race' in args
os.makedirs(out, exist_ok=True)

MIB20 = 20 << 20
# storage: (bytes, device)
STORAGES = {10: (MIB20, 'cpu'), 11: (MIB20, 'cuda:0'), 12: (MIB20, 'cuda:0'),
            20: (1 << 22, 'cuda:0'), 21: (1 << 22, 'cuda:0'), 22: (1 << 22, 'cuda:0'),
            23: (1 << 22, 'cuda:0'), 24: (1 << 22, 'cuda:0')}
# The iteration: (op, inputs, outputs, GPU work: (kind, name, dur)).
OPS = [('aten::mm', [20, 12], [21], ('kernel', 'gemm_a', 400.0)),
       ('aten::relu', [21], [22], ('kernel', 'relu_b', 400.0)),
       ('aten::copy_', [11, 10], [11], ('h2d', 'upload', 1000.0)),
       ('aten::mm', [22, 23], [24], ('kernel', 'gemm_c', 400.0)),
       ('aten::add_', [24, 11], [24], ('kernel', 'add_d', 100.0)),
       ('aten::unknown_op', [], [], ('kernel', 'other_e', 50.0))]


def tensor(tid, storage):
    nbytes, device = STORAGES[storage]
    return [tid, storage, 0, nbytes // 4, 4, device]


def et_nodes():
    nodes = [{'id': 1, 'name': '[pytorch|profiler|execution_trace|process]', 'rf_id': 0}]
    ops = OPS if link == 'align' else OPS[:-1]  # by id: the last op is not in the trace
    for i, (name, ins, outs, _) in enumerate(ops):
        rf = 1 + i
        inputs = [tensor(100 + s, s) for s in ins] + [1]
        types = ['Tensor(float)'] * len(ins) + ['Int']
        outputs = [tensor(100 + s, s) for s in outs]
        node = {'id': 10 + i, 'name': name}
        if schema == '1.0':
            node.update({'rf_id': rf, 'parent': 1, 'tid': 1, 'inputs': inputs,
                         'input_types': types, 'outputs': outputs,
                         'output_types': ['Tensor(float)'] * len(outs)})
        else:
            node.update({'ctrl_deps': 1,
                         'inputs': {'values': inputs, 'shapes': [], 'types': types},
                         'outputs': {'values': outputs, 'shapes': [],
                                     'types': ['Tensor(float)'] * len(outs)},
                         'attrs': [{'name': 'rf_id', 'type': 'uint64', 'value': rf},
                                   {'name': 'tid', 'type': 'uint64', 'value': 1}]})
        nodes.append(node)
    return {'schema': '1.0.1' if schema == '1.0' else '1.1.0-chakra.0.0.4', 'pid': 1,
            'nodes': nodes}


b = Builder()
iterations = 2 if link == 'align' else 1
t0 = 0.0
for it in range(iterations):
    b.step(1 + it, t0, 100.0)
    gpu = t0 + 100.0
    for i, (name, _, _, (kind, kname, dur)) in enumerate(OPS + [OPS[-1]] * unlinked):
        launch = t0 + 10.0 + 10.0 * i
        extra = i >= len(OPS)
        cpu = {'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::other_op' if extra else name,
               'pid': 1, 'tid': 1, 'ts': launch - 2, 'dur': 8.0, 'args': {}}
        rf = 1 + i
        if link == 'rfid':
            cpu['args'] = {'External id': 500 + i, 'Record function id': rf}
        elif link == 'external':
            cpu['args'] = {'External id': rf}
        else:
            cpu['args'] = {'External id': 7000 + 100 * it + i}
        b.events.append(cpu)
        if kind == 'h2d':
            upload = gpu
            b.memcpy('h2d', 7, launch, gpu, dur, MIB20)
        elif race and kname == 'add_d':
            b.kernel(kname, 9, launch, upload + 10.0, dur, grid=(264, 1, 1))
            continue
        else:
            b.kernel(kname, 7, launch, gpu, dur, grid=(264, 1, 1))
        gpu += dur
    t0 += 2600.0
b.write(os.path.join(out, 'kineto.json'))
json.dump(et_nodes(), open(os.path.join(out, 'et.json'), 'w'), indent=1)

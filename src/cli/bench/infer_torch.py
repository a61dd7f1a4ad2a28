# The PyTorch side of `pimgnn bench infer`: the same GCN on the same graph and features, written by pimgnn to
# the directory given as argv[1], run (1) as CSR torch.sparse.mm + Linear and (2) with PyG's GCNConv when
# installed. Prints one line per path: `<name> <median wall seconds> <median CPU seconds>` or
# `<name> unavailable <reason>`, and writes the CSR path's output to logits.npy for pimgnn to compare.
import os
import statistics
import sys
import time

import numpy as np
import torch

directory, runs = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(os.cpu_count() or 1)
load = lambda name: torch.from_numpy(np.load(os.path.join(directory, name + ".npy")))

features = load("features")
layers = int(open(os.path.join(directory, "layers")).read())
weights = [(load(f"weight{i}"), load(f"bias{i}")) for i in range(layers)]
n = features.shape[0]
normalised = torch.sparse_csr_tensor(load("row_ptr"), load("col_idx"), load("values"), size=(n, n))


def median_times(forward):
    with torch.no_grad():
        forward()
        walls, cpus = [], []
        for _ in range(runs):
            wall, cpu = time.perf_counter(), time.process_time()
            out = forward()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return f"{statistics.median(walls)} {statistics.median(cpus)}", out


def csr_linear():
    h = features
    for i, (weight, bias) in enumerate(weights):
        h = torch.sparse.mm(normalised, torch.nn.functional.linear(h, weight)) + bias
        if i + 1 < layers:
            h = torch.relu(h)
    return h


seconds, logits = median_times(csr_linear)
np.save(os.path.join(directory, "logits.npy"), logits.numpy())
print(f"csr_sparse_mm_linear {seconds}")

try:
    from torch_geometric.nn import GCNConv
except ImportError as error:
    print(f"pyg_gcnconv unavailable {error}")
else:
    edge_index = torch.stack([load("edge_col"), load("edge_row")])
    convs = []
    for weight, bias in weights:
        conv = GCNConv(weight.shape[1], weight.shape[0])
        conv.lin.weight.data.copy_(weight)
        conv.bias.data.copy_(bias)
        convs.append(conv.eval())

    def pyg():
        h = features
        for i, conv in enumerate(convs):
            h = conv(h, edge_index)
            if i + 1 < layers:
                h = torch.relu(h)
        return h

    print(f"pyg_gcnconv {median_times(pyg)[0]}")

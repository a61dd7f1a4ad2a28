# The PyTorch Geometric side of `pimgnn bench train`: the same 2-layer GCN, initial weights, graph, features,
# labels and training mask, written by pimgnn to the directory given as argv[1], trained full-batch with
# torch.optim.Adam(lr=0.01, weight_decay=5e-4) as PyG's examples do. One warm-up epoch, then argv[2] timed
# epochs. Prints one line per variant: `<name> <median wall s> <median CPU s> <loss of epoch 0>` or
# `<name> unavailable <reason>`.
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

directory, epochs = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(os.cpu_count() or 1)
load = lambda name: torch.from_numpy(np.load(os.path.join(directory, name + ".npy")))

try:
    from torch_geometric.nn import GCNConv
except ImportError as error:
    print(f"pyg_gcnconv unavailable {error}")
    sys.exit(0)

features, labels, mask = load("features"), load("labels"), load("train_mask")
edge_index = torch.stack([load("edge_col"), load("edge_row")])
weights = [(load(f"weight{i}"), load(f"bias{i}")) for i in range(2)]


def train(cached):
    convs = torch.nn.ModuleList()
    for weight, bias in weights:
        conv = GCNConv(weight.shape[1], weight.shape[0], cached=cached)
        conv.lin.weight.data.copy_(weight)
        conv.bias.data.copy_(bias)
        convs.append(conv)
    optimizer = torch.optim.Adam(convs.parameters(), lr=0.01, weight_decay=5e-4)

    def epoch():
        optimizer.zero_grad()
        h = torch.relu(convs[0](features, edge_index))
        loss = F.cross_entropy(convs[1](h, edge_index)[mask], labels[mask])
        loss.backward()
        optimizer.step()
        return float(loss)

    first_loss = epoch()
    walls, cpus = [], []
    for _ in range(epochs):
        wall, cpu = time.perf_counter(), time.process_time()
        epoch()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return f"{statistics.median(walls)} {statistics.median(cpus)} {first_loss}"


print(f"pyg_gcnconv {train(cached=False)}", flush=True)
print(f"pyg_gcnconv_cached {train(cached=True)}", flush=True)

# The PyTorch Geometric side of `pimgnn bench train`: the same model (GCN, GraphSAGE, GIN or GAT), initial
# weights, graph, features, labels and training mask, written by pimgnn to the directory given as argv[1]
# (model.txt describes the model, state.<name>.npy holds each state_dict tensor; load_state_dict checks that
# PyG's layers have the same tensors), trained full-batch with
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

with open(os.path.join(directory, "model.txt")) as description:
    architecture, activation = description.readline().split()
    layers = [line.split() for line in description if line.strip()]
variant = f"pyg_{architecture}conv"

try:
    from torch_geometric.nn import GATConv, GCNConv, GINConv, SAGEConv
except ImportError as error:
    print(f"{variant} unavailable {error}")
    sys.exit(0)

features, labels, mask = load("features"), load("labels"), load("train_mask")
edge_index = torch.stack([load("edge_col"), load("edge_row")])
state = {
    name[len("state.") : -len(".npy")]: torch.from_numpy(np.load(os.path.join(directory, name)))
    for name in os.listdir(directory)
    if name.startswith("state.")
}


def conv(inputs, outputs, heads, concat, hidden, train_eps, cached):
    if architecture == "gcn":
        return GCNConv(inputs, outputs, cached=cached)
    if architecture == "sage":
        return SAGEConv(inputs, outputs)
    if architecture == "gin":
        mlp = torch.nn.Sequential(
            torch.nn.Linear(inputs, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, outputs)
        )
        return GINConv(mlp, train_eps=train_eps)
    if architecture == "gat":
        per_head = outputs // heads if concat else outputs
        return GATConv(inputs, per_head, heads=heads, concat=concat)
    raise ValueError(f"architecture {architecture}")


class Net(torch.nn.Module):
    def __init__(self, cached):
        super().__init__()
        self.names = []
        for name, inputs, outputs, heads, concat, hidden, train_eps in layers:
            args = (int(inputs), int(outputs), int(heads), concat == "true", int(hidden), train_eps == "true", cached)
            self.add_module(name, conv(*args))
            self.names.append(name)
        self.activation = F.elu if activation == "elu" else F.relu

    def forward(self, x):
        for at, name in enumerate(self.names):
            x = getattr(self, name)(x, edge_index)
            if at + 1 < len(self.names):
                x = self.activation(x)
        return x


def train(cached):
    net = Net(cached)
    net.load_state_dict(state)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=5e-4)

    def epoch():
        optimizer.zero_grad()
        loss = F.cross_entropy(net(features)[mask], labels[mask])
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


def run(name, cached):
    try:
        print(f"{name} {train(cached)}", flush=True)
    except Exception as error:  # a model PyG cannot build or load is reported, not fatal
        print(f"{name} unavailable {type(error).__name__}: {error}", flush=True)


run(variant, cached=False)
if architecture == "gcn":
    run("pyg_gcnconv_cached", cached=True)

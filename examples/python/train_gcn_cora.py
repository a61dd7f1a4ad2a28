"""Trains PyTorch Geometric's 2-layer GCN on Cora three ways: with PyG alone, and with the layers' aggregation on
pimgnn's CPU engine and on its simulated DPUs (UPMEM hardware, where the machine has it, with --backends hw).
Each run starts from the same weights and draws the same dropout masks, so all end at the same accuracy; the
table compares the time per epoch.

    python examples/python/train_gcn_cora.py [--epochs 200] [--backends pyg,cpu,sim] [--dpus 64]

Cora is read from $PIMGNN_DATASETS/cora, or ../shared/datasets/cora beside the repository.
"""

import argparse
import os
import pathlib
import time

import numpy as np
import scipy.io
import torch
import torch.nn.functional as F
import torch_geometric.nn as pyg

import pimgnn.nn

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]


class GCN(torch.nn.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        self.conv1 = pyg.GCNConv(features, hidden)
        self.conv2 = pyg.GCNConv(hidden, classes)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.conv2(x, edge_index)


def load_cora(folder):
    adjacency = scipy.io.mmread(folder / "graph.mtx").tocoo()  # row = target, column = source
    edge_index = torch.tensor(np.stack([adjacency.col, adjacency.row]), dtype=torch.long)
    x = torch.tensor(scipy.io.mmread(folder / "features.mtx").toarray(), dtype=torch.float32)
    masks = {name: torch.from_numpy(np.load(folder / f"{name}_mask.npy")) for name in ("train", "test")}
    return x, edge_index, torch.from_numpy(np.load(folder / "labels.npy")), masks


def train(backend, data, args):
    x, edge_index, labels, masks = data
    torch.manual_seed(args.seed)
    model = GCN(x.shape[1], 16, int(labels.max()) + 1)
    if backend != "pyg":
        pimgnn.nn.on_pim(model, backend=backend, dpus=args.dpus, tasklets=args.tasklets)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    model.train()
    # The first epoch builds the engine (the graph goes onto the DPUs once): timed apart from the others.
    epoch_times = []
    for epoch in range(args.epochs):
        started = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x, edge_index)[masks["train"]], labels[masks["train"]])
        loss.backward()
        optimizer.step()
        epoch_times.append(time.perf_counter() - started)
        if (epoch + 1) % 50 == 0 or epoch + 1 == args.epochs:
            print(f"  {backend:>4}  epoch {epoch + 1:>3}  loss {loss.item():.4f}", flush=True)
    model.eval()
    with torch.no_grad():
        predicted = model(x, edge_index).argmax(1)
    accuracy = (predicted[masks["test"]] == labels[masks["test"]]).float().mean().item()
    steady = epoch_times[1:] or epoch_times
    return accuracy, epoch_times[0], sum(steady) / len(steady), loss.item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--backends", default="pyg,cpu,sim", help="pyg (PyG alone), cpu, sim, hw, auto")
    parser.add_argument("--dpus", type=int, default=64)
    parser.add_argument("--tasklets", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--datasets", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("PIMGNN_DATASETS", REPOSITORY.parent / "shared" / "datasets")))
    args = parser.parse_args()
    data = load_cora(args.datasets / "cora")
    print(f"GCN on Cora: {data[0].shape[0]} nodes, {data[1].shape[1]} edges, {args.epochs} epochs, "
          f"{torch.get_num_threads()} threads")
    results = {backend: train(backend, data, args) for backend in args.backends.split(",")}
    print(f"\n{'aggregation':<24}{'test accuracy':>14}{'first epoch (ms)':>18}{'epoch (ms)':>12}{'final loss':>12}")
    for backend, (accuracy, first, epoch, loss) in results.items():
        name = "PyG alone" if backend == "pyg" else f"pimgnn {backend}"
        print(f"{name:<24}{accuracy:>14.4f}{first * 1e3:>18.1f}{epoch * 1e3:>12.2f}{loss:>12.4f}")


if __name__ == "__main__":
    main()

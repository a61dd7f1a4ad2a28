"""Shared fixtures: the Planetoid datasets (from PIMGNN_DATASETS, or ../shared/datasets beside the repository)
and the engines the layers are checked on."""

import os
import pathlib

import numpy as np
import pytest
import scipy.io
import torch

import pimgnn.nn

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
DATASETS = pathlib.Path(os.environ.get("PIMGNN_DATASETS", REPOSITORY.parent / "shared" / "datasets"))

# The CPU engine, and the simulator on few DPUs (each call simulates every DPU, so tests keep the set small).
ENGINES = {
    "cpu": pimgnn.nn.EngineOptions(backend="cpu"),
    "sim": pimgnn.nn.EngineOptions(backend="sim", dpus=16, tasklets=8),
}


class Dataset:
    """A Planetoid graph as PyG holds it: edge_index (source, target), dense features, labels and masks."""

    def __init__(self, name):
        folder = DATASETS / name
        if not folder.is_dir():
            pytest.fail(f"dataset {name} not found in {DATASETS} (set PIMGNN_DATASETS)")
        adjacency = scipy.io.mmread(folder / "graph.mtx").tocoo()  # row = target, column = source
        self.edge_index = torch.tensor(np.stack([adjacency.col, adjacency.row]), dtype=torch.long)
        self.x = torch.tensor(scipy.io.mmread(folder / "features.mtx").toarray(), dtype=torch.float32)
        self.y = torch.from_numpy(np.load(folder / "labels.npy"))
        self.train_mask = torch.from_numpy(np.load(folder / "train_mask.npy"))
        self.test_mask = torch.from_numpy(np.load(folder / "test_mask.npy"))
        self.num_nodes = self.x.shape[0]
        self.num_classes = int(self.y.max()) + 1
        self.folder = folder


_datasets = {}


def dataset(name):
    if name not in _datasets:
        _datasets[name] = Dataset(name)
    return _datasets[name]


@pytest.fixture(params=["cora", "citeseer"])
def planetoid(request):
    return dataset(request.param)


@pytest.fixture
def cora():
    return dataset("cora")


@pytest.fixture(params=sorted(ENGINES))
def engine_options(request):
    return ENGINES[request.param]

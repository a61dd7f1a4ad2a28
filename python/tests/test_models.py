"""Whole models: a trained PyG model moved onto the simulator, and one epoch of training against PyG's."""

import numpy as np
import torch
import torch.nn.functional as F
import torch_geometric.nn as pyg

import pimgnn.nn
from conftest import ENGINES


class GCN(torch.nn.Module):
    """The model of ../shared/datasets/models/cora_gcn.safetensors."""

    def __init__(self, features, hidden, classes):
        super().__init__()
        self.conv1 = pyg.GCNConv(features, hidden)
        self.conv2 = pyg.GCNConv(hidden, classes)

    def forward(self, x, edge_index):
        return self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)


def test_a_trained_pyg_model_on_the_simulator_gives_pygs_logits(cora):
    model = GCN(cora.x.shape[1], 16, cora.num_classes)
    pimgnn.nn.load_state_dict(model, cora.folder.parent / "models" / "cora_gcn.safetensors")
    model.eval()
    with torch.no_grad():
        expected = model(cora.x, cora.edge_index)
        pimgnn.nn.on_pim(model, backend="sim", dpus=16, tasklets=8)
        assert isinstance(model.conv1, pimgnn.nn.GCNConv)
        found = model(cora.x, cora.edge_index)
    assert (found - expected).abs().max().item() <= 1e-4
    recorded = torch.from_numpy(np.load(cora.folder.parent / "models" / "cora_gcn_logits.npy"))
    assert (found - recorded).abs().max().item() <= 1e-4
    correct = (found.argmax(1)[cora.test_mask] == cora.y[cora.test_mask]).sum().item()
    assert (correct, int(cora.test_mask.sum())) == (809, 1000), "the model's test accuracy, 0.8090"
    pimgnn.nn.off_pim(model)
    assert type(model.conv1) is pyg.GCNConv


class GAT(torch.nn.Module):
    """The model of ../shared/datasets/models/cora_gat.safetensors."""

    def __init__(self, features, classes):
        super().__init__()
        self.conv1 = pyg.GATConv(features, 8, heads=8, dropout=0.6)
        self.conv2 = pyg.GATConv(64, classes, heads=1, concat=False, dropout=0.6)

    def forward(self, x, edge_index):
        return self.conv2(F.elu(self.conv1(x, edge_index)), edge_index)


def test_a_trained_pyg_gat_on_the_simulator_gives_pygs_logits(cora):
    model = GAT(cora.x.shape[1], cora.num_classes)
    pimgnn.nn.load_state_dict(model, cora.folder.parent / "models" / "cora_gat.safetensors")
    model.eval()
    with torch.no_grad():
        expected = model(cora.x, cora.edge_index)
        pimgnn.nn.on_pim(model, backend="sim", dpus=16, tasklets=8)
        found = model(cora.x, cora.edge_index)
    assert (found - expected).abs().max().item() <= 1e-4
    recorded = torch.from_numpy(np.load(cora.folder.parent / "models" / "cora_gat_logits.npy"))
    assert (found - recorded).abs().max().item() <= 1e-4
    correct = (found.argmax(1)[cora.test_mask] == cora.y[cora.test_mask]).sum().item()
    assert correct == 815, "the model's test accuracy, 0.8150"


def test_a_state_dict_saved_by_torch_loads(cora, tmp_path):
    model = GCN(cora.x.shape[1], 16, cora.num_classes)
    torch.save(model.state_dict(), tmp_path / "gcn.pt")
    moved = pimgnn.nn.on_pim(GCN(cora.x.shape[1], 16, cora.num_classes), backend="cpu")
    pimgnn.nn.load_state_dict(moved, tmp_path / "gcn.pt")
    for (name, expected), found in zip(model.state_dict().items(), moved.state_dict().values()):
        assert torch.equal(expected, found), name


def test_one_epoch_of_training_gives_pygs_gradients(cora):
    torch.manual_seed(0)
    reference = GCN(cora.x.shape[1], 16, cora.num_classes)
    ours = GCN(cora.x.shape[1], 16, cora.num_classes)
    ours.load_state_dict(reference.state_dict())
    pimgnn.nn.on_pim(ours, **{field: getattr(ENGINES["sim"], field) for field in ("backend", "dpus", "tasklets")})
    for model in (reference, ours):
        loss = F.cross_entropy(model(cora.x, cora.edge_index)[cora.train_mask], cora.y[cora.train_mask])
        loss.backward()
    for (name, expected), found in zip(reference.named_parameters(), ours.parameters()):
        error = (found.grad - expected.grad).abs().max().item()
        assert error <= 1e-5 * max(expected.grad.abs().max().item(), 1.0), f"gradient of {name}: {error:.3e}"

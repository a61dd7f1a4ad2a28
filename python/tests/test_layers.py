"""Every layer against PyTorch Geometric's own, forward and backward, on Cora and CiteSeer, on the CPU engine
and on the simulator."""

import pytest
import torch
import torch_geometric.nn as pyg

import pimgnn.nn

TOLERANCE = 1e-5


def layers(in_channels, out_channels):
    """(name, PyG layer, pimgnn layer class, its constructor arguments)."""

    def gin_mlp():
        return torch.nn.Sequential(
            torch.nn.Linear(in_channels, 32), torch.nn.ReLU(), torch.nn.Linear(32, out_channels)
        )

    mlp = gin_mlp()
    return [
        ("gcn", pyg.GCNConv(in_channels, out_channels), pimgnn.nn.GCNConv, (in_channels, out_channels), {}),
        ("sage", pyg.SAGEConv(in_channels, out_channels), pimgnn.nn.SAGEConv, (in_channels, out_channels), {}),
        (
            "sage-sum-projected",
            pyg.SAGEConv(in_channels, out_channels, aggr="sum", project=True, normalize=True),
            pimgnn.nn.SAGEConv,
            (in_channels, out_channels),
            dict(aggr="sum", project=True, normalize=True),
        ),
        ("gin", pyg.GINConv(mlp, eps=0.25, train_eps=True), pimgnn.nn.GINConv, (mlp,), dict(eps=0.25, train_eps=True)),
        ("gat", pyg.GATConv(in_channels, out_channels, heads=3), pimgnn.nn.GATConv, (in_channels, out_channels),
         dict(heads=3)),
        (
            "gat-mean-residual",
            pyg.GATConv(in_channels, out_channels, heads=2, concat=False, residual=True, negative_slope=0.1),
            pimgnn.nn.GATConv,
            (in_channels, out_channels),
            dict(heads=2, concat=False, residual=True, negative_slope=0.1),
        ),
    ]


def assert_close(found, expected, what):
    error = (found - expected).abs().max().item()
    scale = max(expected.abs().max().item(), 1.0)
    assert error <= TOLERANCE * scale, f"{what}: largest difference {error:.3e} (scale {scale:.3e})"


@pytest.mark.parametrize("layer", ["gcn", "sage", "sage-sum-projected", "gin", "gat", "gat-mean-residual"])
def test_layer_matches_pyg_forward_and_backward(planetoid, engine_options, layer):
    torch.manual_seed(0)
    # A narrow input keeps the simulated calls short; the first transform makes it from the dataset's features.
    x = (planetoid.x @ torch.randn(planetoid.x.shape[1], 24)).requires_grad_()
    name, reference, ours_class, args, kwargs = next(spec for spec in layers(24, 8) if spec[0] == layer)
    ours = ours_class(*args, engine=engine_options, **kwargs)
    ours.load_state_dict(reference.state_dict())

    expected = reference(x, planetoid.edge_index)
    found = ours(x, planetoid.edge_index)
    assert_close(found, expected, f"{name} forward")

    upstream = torch.randn_like(expected)
    expected_grads = torch.autograd.grad((expected * upstream).sum(), [x, *reference.parameters()])
    found_grads = torch.autograd.grad((found * upstream).sum(), [x, *ours.parameters()])
    names = ["x"] + [name for name, _ in reference.named_parameters()]
    for what, got, want in zip(names, found_grads, expected_grads):
        assert_close(got, want, f"{name} gradient of {what}")


def test_gcn_with_edge_weights_and_improved_matches_pyg(cora, engine_options):
    torch.manual_seed(1)
    weights = torch.rand(cora.edge_index.shape[1])
    reference = pyg.GCNConv(cora.x.shape[1], 16, improved=True)
    ours = pimgnn.nn.GCNConv(cora.x.shape[1], 16, improved=True, engine=engine_options)
    ours.load_state_dict(reference.state_dict())
    assert_close(ours(cora.x, cora.edge_index, weights), reference(cora.x, cora.edge_index, weights), "gcn weighted")


def test_layers_share_one_resident_matrix_per_graph(cora):
    options = pimgnn.nn.EngineOptions(backend="cpu")
    first, second = pimgnn.nn.GCNConv(8, 8, engine=options), pimgnn.nn.GCNConv(8, 8, engine=options)
    x = torch.randn(cora.num_nodes, 8)
    edge_index = cora.edge_index.clone()  # a graph of its own, which no other test's engines share
    first(x, edge_index), second(x, edge_index)
    graph = pimgnn.nn.graph_of(edge_index, cora.num_nodes)
    assert len(graph.gcn_norm()._engines) == 1


def test_sage_refuses_an_aggregation_that_is_no_spmm():
    with pytest.raises(pimgnn.InvalidError, match="aggr 'max'"):
        pimgnn.nn.SAGEConv(4, 4, aggr="max")


def test_gat_refuses_edge_features():
    with pytest.raises(pimgnn.InvalidError, match="edge_dim"):
        pimgnn.nn.GATConv(4, 4, edge_dim=2)

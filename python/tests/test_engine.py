"""Graphs from every input form, the engine's results and what it reports."""

import numpy as np
import pytest
import scipy.sparse
import torch

import pimgnn

EDGES = np.array([[0, 1, 2, 2], [1, 2, 0, 1]])  # source -> target
X = np.arange(12, dtype=np.float32).reshape(3, 4)


def expected(weights=(1.0, 1.0, 1.0, 1.0)):
    y = np.zeros_like(X)
    for (source, target), weight in zip(EDGES.T, weights):
        y[target] += weight * X[source]
    return y


def test_a_graph_from_an_edge_index_a_scipy_matrix_and_a_torch_sparse_tensor_aggregates_alike():
    weights = np.array([0.5, 2.0, 1.0, -1.0], dtype=np.float32)
    matrix = scipy.sparse.csr_array((weights, (EDGES[1], EDGES[0])), shape=(3, 3))  # rows are targets
    graphs = [
        pimgnn.Graph(EDGES, edge_weight=weights),
        pimgnn.Graph(torch.from_numpy(EDGES), num_nodes=3, edge_weight=torch.from_numpy(weights)),
        pimgnn.Graph(matrix),
        pimgnn.Graph(torch.from_numpy(matrix.toarray()).to_sparse_coo()),
        pimgnn.Graph(torch.from_numpy(matrix.toarray()).to_sparse_csr()),
    ]
    for graph in graphs:
        assert (graph.num_nodes, graph.num_edges) == (3, 4)
        np.testing.assert_allclose(pimgnn.Engine(graph, backend="cpu").spmm(X), expected(weights), rtol=1e-6)


def test_the_simulator_computes_what_the_cpu_computes_and_reports_its_plan():
    graph = pimgnn.Graph(EDGES)
    with pimgnn.Engine(graph, backend="sim", dpus=4, tasklets=4) as engine:
        np.testing.assert_array_equal(engine.spmm(X), expected())
        assert engine.backend == "simulator"
        assert "PIM SpMM on" in engine.plan and engine.shape == (3, 3)
        assert engine.balance.max >= engine.balance.median >= engine.balance.min
        assert "LoadBalance(min=" in repr(engine.balance)
        timing = engine.timing()
        assert [phase.name for phase in timing.phases] == ["send X", "kernel", "gather", "merge"]
        assert timing.predicted > 0 and "predicted (ms)" in repr(timing) and "total" in repr(timing)
    with pytest.raises(pimgnn.InvalidError, match="closed"):
        engine.spmm(X)


def test_an_explicit_plan_runs_as_given():
    engine = pimgnn.Engine(pimgnn.Graph(EDGES), backend="sim", plan="csr:rows=2,split=no,cols=1,groups=1,x=whole,tasklets=2")
    assert "as given" in engine.plan
    np.testing.assert_array_equal(engine.spmm(X), expected())


def test_quantized_aggregation_is_close_to_float():
    generator = np.random.default_rng(0)
    graph = pimgnn.Graph(generator.integers(0, 100, size=(2, 800)), num_nodes=100)
    x = generator.standard_normal((100, 16)).astype(np.float32)
    exact = pimgnn.Engine(graph, backend="cpu").spmm(x)
    engine = pimgnn.Engine(graph, backend="cpu", dtype="i8")
    assert engine.dtype == "i8"
    assert np.abs(engine.spmm(x) - exact).max() <= 0.05 * np.abs(exact).max()


def test_results_are_the_engines_buffer_handed_over_without_a_copy():
    engine = pimgnn.Engine(pimgnn.Graph(EDGES), backend="cpu")
    y = engine.spmm(X)
    assert y.flags.c_contiguous and y.flags.writeable and y.base is not None
    tensor = engine.spmm(torch.from_numpy(X))
    assert tensor.numpy().base is not None  # a view of the engine's array, not a copy of it


def test_a_graph_is_read_from_a_matrix_market_file(tmp_path):
    path = tmp_path / "graph.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 4\n2 1\n3 2\n1 3\n2 3\n")
    graph = pimgnn.Graph.read(path)
    np.testing.assert_array_equal(pimgnn.Engine(graph, backend="cpu").spmm(X), expected())


def test_derived_matrices_follow_pyg():
    graph = pimgnn.Graph(EDGES)
    indptr, indices, data = graph.mean_norm().csr()
    np.testing.assert_array_equal(indptr, [0, 1, 3, 4])
    np.testing.assert_allclose(data, [1.0, 0.5, 0.5, 1.0])
    assert graph.gcn_norm().num_edges == 7 and not graph.is_symmetric()
    assert graph.gcn_norm() is graph.gcn_norm(), "derived matrices are made once"

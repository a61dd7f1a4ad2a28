"""The pimgnn::spmm operator: torch.library's checks, and gradcheck on the CPU engine."""

import numpy as np
import pytest
import torch

import pimgnn
import pimgnn.ops  # registers the operators the checks name


def directed_graph():
    """A graph that is not symmetric, so the backward pass needs the transposed engine."""
    generator = np.random.default_rng(3)
    edges = generator.integers(0, 40, size=(2, 160))
    return pimgnn.Graph(edges, num_nodes=40, edge_weight=generator.random(160).astype(np.float32))


def test_opcheck_passes_on_the_cpu_engine_and_the_simulator():
    for options in (dict(backend="cpu"), dict(backend="sim", dpus=4, tasklets=4)):
        engine = pimgnn.Engine(directed_graph(), **options)
        for transpose in (False, True):
            x = torch.randn(40, 6, requires_grad=True)
            torch.library.opcheck(torch.ops.pimgnn.spmm.default, (x, engine.id, transpose))


@pytest.mark.filterwarnings("ignore:Input #0 requires gradient and is not a double")
def test_gradcheck_on_the_cpu_engine():
    # The engine computes in float32, so the finite differences use float32 steps: eps 1e-2 moves each output
    # by about 1e-2 times a weight below 1, whose rounding (about 6e-8 relative) stays far below atol 1e-3.
    engine = pimgnn.Engine(directed_graph(), backend="cpu")
    x = torch.randn(40, 3, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda x: engine.spmm(x), (x,), eps=1e-2, atol=1e-3, rtol=1e-3, nondet_tol=0.0, fast_mode=False
    )


def test_the_backward_pass_is_the_transposed_product():
    graph = directed_graph()
    engine = pimgnn.Engine(graph, backend="cpu")
    indptr, indices, data = graph.csr()
    dense = np.zeros((40, 40), dtype=np.float32)
    for row in range(40):
        for at in range(indptr[row], indptr[row + 1]):
            dense[row, indices[at]] += data[at]
    x = torch.randn(40, 5, requires_grad=True)
    upstream = torch.randn(40, 5)
    (engine.spmm(x) * upstream).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), dense.T @ upstream.numpy(), rtol=1e-5, atol=1e-5)
    assert not graph.is_symmetric() and engine._transposed is not engine


def test_float64_inputs_are_computed_in_float32_and_returned_in_float64():
    engine = pimgnn.Engine(directed_graph(), backend="cpu")
    x = torch.randn(40, 2, dtype=torch.float64)
    y = engine.spmm(x)
    assert y.dtype == torch.float64
    torch.testing.assert_close(y, engine.spmm(x.float()).double())


def test_opcheck_passes_for_values_given_per_call():
    graph = directed_graph()
    for options in (dict(backend="cpu"), dict(backend="sim", dpus=4, tasklets=4)):
        engine = pimgnn.Engine(graph, weighted=True, **options)
        for transpose in (False, True):
            x = torch.randn(40, 6, requires_grad=True)
            values = torch.rand(graph.num_edges, 2, requires_grad=True)
            torch.library.opcheck(torch.ops.pimgnn.spmm_values.default, (x, values, engine.id, transpose))


@pytest.mark.filterwarnings("ignore:Input #. requires gradient and is not a double")
def test_gradcheck_of_features_and_values_on_the_cpu_engine():
    graph = directed_graph()
    engine = pimgnn.Engine(graph, backend="cpu", weighted=True)
    x = torch.randn(40, 4, requires_grad=True)
    values = torch.rand(graph.num_edges, 2, requires_grad=True)
    for transpose in (False, True):
        assert torch.autograd.gradcheck(
            lambda x, values: engine.spmm(x, values=values, transpose=transpose), (x, values),
            eps=1e-2, atol=1e-3, rtol=1e-3, fast_mode=False,
        )


def test_values_per_head_multiply_their_own_columns():
    graph = directed_graph()
    indptr, indices, _ = graph.csr()
    rng = np.random.default_rng(5)
    values = rng.random((graph.num_edges, 2)).astype(np.float32)
    x = rng.standard_normal((40, 6)).astype(np.float32)
    expected = np.zeros_like(x)
    for row in range(40):
        for at in range(indptr[row], indptr[row + 1]):
            for head in range(2):
                expected[row, head * 3:(head + 1) * 3] += values[at, head] * x[indices[at], head * 3:(head + 1) * 3]
    found = pimgnn.Engine(graph, backend="sim", dpus=4, tasklets=4, weighted=True).spmm(x, values=values)
    np.testing.assert_allclose(found, expected, rtol=1e-5, atol=1e-5)

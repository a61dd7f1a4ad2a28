"""The ``pimgnn::spmm`` and ``pimgnn::spmm_values`` operators: ``A x`` on an engine as ``torch.library`` custom
ops, with their backward passes (``A^T dy``, on the same engine when ``A`` is symmetric; for values given per call,
also their gradient, the ``pimgnn::sddmm`` of ``dy`` and ``x`` over ``A``'s structure) and their fake
implementations for ``torch.compile``."""

import torch

from .engine import engine_by_id
from .errors import ShapeError


@torch.library.custom_op("pimgnn::spmm", mutates_args=(), device_types="cpu")
def _spmm(x: torch.Tensor, engine: int, transpose: bool) -> torch.Tensor:
    """``A x`` (``A^T x`` when ``transpose``) on the engine whose id is ``engine``, in float32, returned in
    ``x``'s dtype."""
    if x.dim() != 2:
        raise ShapeError(f"shape mismatch in features: expected (nodes, features), found {tuple(x.shape)}")
    resident = engine_by_id(engine)._resident(transpose)
    features = x.detach().to(torch.float32).contiguous().numpy()
    y = torch.from_numpy(resident._native.spmm(features))
    return y if x.dtype == torch.float32 else y.to(x.dtype)


def _fake_product(x, engine, transpose):
    rows, cols = engine_by_id(engine).shape
    if transpose:
        rows, cols = cols, rows
    torch._check(x.dim() == 2, lambda: f"features: expected (nodes, features), found {tuple(x.shape)}")
    torch._check(x.shape[0] == cols, lambda: f"features: expected {cols} rows, found {x.shape[0]}")
    return x.new_empty((rows, x.shape[1]))


@_spmm.register_fake
def _(x, engine, transpose):
    return _fake_product(x, engine, transpose)


def _setup_context(ctx, inputs, output):
    _, ctx.engine, ctx.transpose = inputs


def _backward(ctx, grad):
    return _spmm(grad, ctx.engine, not ctx.transpose), None, None


_spmm.register_autograd(_backward, setup_context=_setup_context)


@torch.library.custom_op("pimgnn::spmm_values", mutates_args=(), device_types="cpu")
def _spmm_values(x: torch.Tensor, values: torch.Tensor, engine: int, transpose: bool) -> torch.Tensor:
    """``A' x`` (``A'^T x`` when ``transpose``) on the weighted engine ``engine``, ``A'`` its structure with
    ``values`` (``(nonzeros,)`` or ``(nonzeros, heads)``), in float32, returned in ``x``'s dtype."""
    if x.dim() != 2:
        raise ShapeError(f"shape mismatch in features: expected (nodes, features), found {tuple(x.shape)}")
    features = x.detach().to(torch.float32).contiguous().numpy()
    weights = values.detach().to(torch.float32).contiguous().numpy()
    y = torch.from_numpy(engine_by_id(engine)._apply_values(features, weights, transpose))
    return y if x.dtype == torch.float32 else y.to(x.dtype)


@_spmm_values.register_fake
def _(x, values, engine, transpose):
    return _fake_product(x, engine, transpose)


def _setup_values_context(ctx, inputs, output):
    x, values, ctx.engine, ctx.transpose = inputs
    ctx.save_for_backward(x, values)


def _values_backward(ctx, grad):
    x, values = ctx.saved_tensors
    grad_x = _spmm_values(grad, values, ctx.engine, not ctx.transpose) if ctx.needs_input_grad[0] else None
    grad_values = None
    if ctx.needs_input_grad[1]:
        # dA[i, j] = <dY_i, X_j> per head for Y = A X; the roles swap for Y = A^T X. Both run over A's structure.
        heads = 1 if values.dim() == 1 else values.shape[1]
        p, q = (x, grad) if ctx.transpose else (grad, x)
        grad_values = _sddmm(p, q, ctx.engine, heads).reshape(values.shape).to(values.dtype)
    return grad_x, grad_values, None, None


@torch.library.custom_op("pimgnn::sddmm", mutates_args=(), device_types="cpu")
def _sddmm(p: torch.Tensor, q: torch.Tensor, engine: int, heads: int) -> torch.Tensor:
    """``<p_i, q_j>`` per head for every nonzero ``(i, j)`` of the engine's ``A``, in its order: ``(nonzeros,
    heads)`` in float32, head ``h`` taking the ``h``-th of ``heads`` equal groups of columns."""
    resident = engine_by_id(engine)
    width = p.shape[1] // heads
    p, q = (t.detach().to(torch.float32) for t in (p, q))
    columns = [
        torch.from_numpy(resident._sddmm(p[:, h * width:(h + 1) * width].numpy(), q[:, h * width:(h + 1) * width].numpy()))
        for h in range(heads)
    ]
    return torch.stack(columns, dim=1)


@_sddmm.register_fake
def _(p, q, engine, heads):
    return p.new_empty((engine_by_id(engine).graph.num_edges, heads), dtype=torch.float32)


_spmm_values.register_autograd(_values_backward, setup_context=_setup_values_context)


def spmm(x, engine, transpose=False):
    """``engine``'s ``A x`` (``A^T x`` when ``transpose``) for a tensor ``x``, differentiable in ``x``."""
    return _spmm(x, engine.id, transpose)


def spmm_values(x, values, engine, transpose=False):
    """``engine``'s ``A' x`` (``A'^T x`` when ``transpose``), ``A'`` its structure with ``values`` per nonzero
    (and head), differentiable in ``x`` and ``values``."""
    return _spmm_values(x, values, engine.id, transpose)

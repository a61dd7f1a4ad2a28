"""The ``pimgnn::spmm`` operator: ``A x`` on an engine as a ``torch.library`` custom op, with its backward pass
(``A^T dy``, on the same engine when ``A`` is symmetric) and its fake implementation for ``torch.compile``."""

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


@_spmm.register_fake
def _(x, engine, transpose):
    rows, cols = engine_by_id(engine).shape
    if transpose:
        rows, cols = cols, rows
    torch._check(x.dim() == 2, lambda: f"features: expected (nodes, features), found {tuple(x.shape)}")
    torch._check(x.shape[0] == cols, lambda: f"features: expected {cols} rows, found {x.shape[0]}")
    return x.new_empty((rows, x.shape[1]))


def _setup_context(ctx, inputs, output):
    _, ctx.engine, ctx.transpose = inputs


def _backward(ctx, grad):
    return _spmm(grad, ctx.engine, not ctx.transpose), None, None


_spmm.register_autograd(_backward, setup_context=_setup_context)


def spmm(x, engine, transpose=False):
    """``engine``'s ``A x`` (``A^T x`` when ``transpose``) for a tensor ``x``, differentiable in ``x``."""
    return _spmm(x, engine.id, transpose)

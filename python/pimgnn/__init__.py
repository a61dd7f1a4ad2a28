"""pimgnn: graph neural network aggregation on UPMEM processing-in-memory, from Python.

A :class:`Graph` holds a graph's adjacency matrix; an :class:`Engine` keeps a graph's matrix resident on the
DPUs (real ones, or the bundled simulator when the machine has none) or on the CPU, and multiplies it with
features: ``engine.spmm(x)`` takes and returns NumPy arrays or PyTorch tensors, and with tensors it is a
``torch.library`` op with a backward pass, so autograd trains through it. :mod:`pimgnn.nn` has PyTorch
Geometric's ``GCNConv``, ``SAGEConv`` and ``GINConv`` aggregating on an engine, and :func:`pimgnn.nn.on_pim`
moves an existing PyG model's convolutions onto one.

    >>> import numpy as np, pimgnn
    >>> graph = pimgnn.Graph(np.array([[0, 1], [1, 0]]))  # edge_index: 0 -> 1 and 1 -> 0
    >>> engine = pimgnn.Engine(graph, backend="cpu")
    >>> engine.spmm(np.array([[1.0], [2.0]], dtype=np.float32))
    array([[2.],
           [1.]], dtype=float32)
"""

from . import errors
from ._native import hardware_present
from .engine import Engine, Timing
from .errors import (
    CapacityError,
    Error,
    FileError,
    IndexOutOfRangeError,
    InvalidError,
    NoHardwareError,
    NotFiniteError,
    ShapeError,
    UpmemError,
)
from .graph import Graph

__all__ = ["Engine", "Graph", "Timing", "hardware_present", "errors", *errors.__all__]

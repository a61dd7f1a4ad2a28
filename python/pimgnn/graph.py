"""Graphs from what PyTorch Geometric, PyTorch, SciPy and NumPy hold them in."""

import os

import numpy as np

from . import _native
from .errors import InvalidError, ShapeError


def _numpy(array, dtype):
    """A NumPy array of `dtype` viewing (or, when its type differs, converting) a NumPy array or a CPU tensor."""
    if hasattr(array, "detach"):  # a torch.Tensor
        array = array.detach().cpu().numpy()
    return np.ascontiguousarray(array, dtype=dtype)


def _is_sparse_matrix(source):
    if hasattr(source, "tocoo") and hasattr(source, "shape"):  # SciPy
        return True
    if hasattr(source, "coo") and hasattr(source, "sparse_sizes"):  # torch_sparse.SparseTensor
        return True
    layout = getattr(source, "layout", None)
    return layout is not None and "sparse" in str(layout)  # torch sparse COO, CSR, ...


class Graph:
    """A graph's adjacency matrix, kept on the host, from which :class:`pimgnn.Engine` loads the matrices to
    aggregate with.

    ``source`` is either

    * an ``edge_index`` (PyG's ``[2, num_edges]`` tensor or array of source and target nodes; messages flow
      from ``edge_index[0]`` to ``edge_index[1]``), with ``num_nodes`` (default: the largest id plus one) and
      optional ``edge_weight``; or
    * a sparse matrix given as the matrix to multiply, rows being targets (as PyG's ``adj_t``): a
      ``torch_sparse.SparseTensor``, a PyTorch sparse tensor (COO or CSR) or a SciPy sparse matrix or array.
      Its values are the edge weights.

    ``weighted`` says whether the edges came with weights (PyG's ``GCNConv`` reads ``improved`` only then).
    Repeated edges stay separate, as PyG counts them. The matrices PyG's layers use are derived once per graph
    and cached (:meth:`gcn_norm`, :meth:`mean_norm`, :meth:`unweighted`), as are the engines they are resident
    in (:meth:`engine`), so that every layer aggregating over this graph shares them.
    """

    def __init__(self, source, num_nodes=None, edge_weight=None):
        if isinstance(source, _native.Graph):
            self._native = source
            self.weighted = True
        elif _is_sparse_matrix(source):
            if edge_weight is not None:
                raise InvalidError("edge_weight: a sparse matrix carries its weights as its values")
            self._native = self._from_matrix(source, num_nodes)
            self.weighted = True
        else:
            self._native = self._from_edge_index(source, num_nodes, edge_weight)
            self.weighted = edge_weight is not None
        self._derived = {}
        self._engines = {}

    @staticmethod
    def _from_edge_index(edge_index, num_nodes, edge_weight):
        edges = _numpy(edge_index, np.int64)
        if edges.ndim != 2 or edges.shape[0] != 2:
            raise ShapeError(f"shape mismatch in edge_index: expected [2, num_edges], found {list(edges.shape)}")
        if num_nodes is None:
            num_nodes = int(edges.max()) + 1 if edges.size else 0
        weights = None
        if edge_weight is not None:
            weights = _numpy(edge_weight, np.float32).reshape(-1)
            if weights.shape[0] != edges.shape[1]:
                raise ShapeError(
                    f"shape mismatch in edge_weight (one per edge): expected {edges.shape[1]}, found {weights.shape[0]}"
                )
        return _native.Graph(int(num_nodes), edges[0], edges[1], weights)

    @staticmethod
    def _from_matrix(matrix, num_nodes):
        if hasattr(matrix, "sparse_sizes"):  # torch_sparse.SparseTensor: coo() gives rows, columns, values
            rows, cols, values = matrix.coo()
            shape = tuple(matrix.sparse_sizes())
        elif hasattr(matrix, "tocoo"):
            coo = matrix.tocoo()
            rows, cols, values = coo.row, coo.col, coo.data
            shape = tuple(coo.shape)
        else:
            coo = matrix.to_sparse_coo().coalesce() if "coo" not in str(matrix.layout) else matrix
            indices = coo._indices()
            rows, cols, values = indices[0], indices[1], coo._values()
            shape = tuple(coo.shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ShapeError(f"shape mismatch in adjacency matrix (nodes x nodes): expected a square matrix, found {shape}")
        if num_nodes is not None and num_nodes != shape[0]:
            raise ShapeError(f"shape mismatch in num_nodes (the matrix's size): expected {shape[0]}, found {num_nodes}")
        weights = None if values is None else _numpy(values, np.float32)
        return _native.Graph(shape[0], _numpy(cols, np.int64), _numpy(rows, np.int64), weights)

    @classmethod
    def read(cls, path, weighted=False):
        """The graph in a Matrix Market file (``.mtx``, rows being targets) or a CSV edge list (``.csv``, each
        undirected edge once), read by the Rust library; the file's values are the edge weights when
        ``weighted``, else every edge weighs 1. Raises :class:`pimgnn.FileError` naming the file and line."""
        native = _native.Graph.read(os.fspath(path))
        graph = cls(native if weighted else native.unweighted())
        graph.weighted = weighted
        return graph

    @property
    def num_nodes(self):
        """Nodes."""
        return self._native.num_nodes

    @property
    def num_edges(self):
        """Edges (nonzeros of the adjacency matrix, repeated edges counted)."""
        return self._native.num_edges

    def _derive(self, key, make):
        if key not in self._derived:
            self._derived[key] = Graph(make())
        return self._derived[key]

    def gcn_norm(self, add_self_loops=True, improved=False):
        """``GCNConv``'s matrix: PyG's ``gcn_norm`` with the edge weights (remaining self-loops of weight 1, or 2
        when ``improved``, added when ``add_self_loops``), as a graph of its own."""
        fill = 2.0 if improved else 1.0
        return self._derive(("gcn", add_self_loops, fill), lambda: self._native.gcn_norm(add_self_loops, fill))

    def mean_norm(self):
        """``SAGEConv``'s mean aggregation: each row over its node's in-degree, every edge of weight 1."""
        return self._derive("mean", self._native.mean_norm)

    def unweighted(self):
        """``GINConv``'s sum aggregation: every edge of weight 1."""
        return self._derive("sum", self._native.unweighted)

    def attention_structure(self):
        """``GATConv``'s structure: self-loops replaced by one per node, placed last in its row, every value 1."""
        return self._derive("attention", self._native.attention_structure)

    def transpose(self):
        """The graph with every edge reversed (the matrix transposed)."""
        return self._derive("transpose", self._native.transpose)

    def is_symmetric(self):
        """Whether the matrix equals its transpose, weights included."""
        if "symmetric" not in self._derived:
            self._derived["symmetric"] = self._native.is_symmetric()
        return self._derived["symmetric"]

    def csr(self):
        """The matrix as ``(indptr, indices, data)`` NumPy arrays, rows being targets."""
        return self._native.csr()

    def engine(self, **options):
        """The :class:`pimgnn.Engine` with this graph's matrix resident for ``options`` (those of
        :class:`pimgnn.Engine`), made on first use and shared by later calls with the same options."""
        from .engine import Engine

        key = tuple(sorted((name, tuple(value) if isinstance(value, list) else value) for name, value in options.items()))
        if key not in self._engines:
            self._engines[key] = Engine(self, **options)
        return self._engines[key]

    def close(self):
        """Closes the engines :meth:`engine` made for this graph and the graphs derived from it, releasing their
        DPUs."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()
        for derived in self._derived.values():
            if isinstance(derived, Graph):
                derived.close()

    def __repr__(self):
        return f"Graph(num_nodes={self.num_nodes}, num_edges={self.num_edges})"

"""PyTorch Geometric's convolutions with their aggregation on a pimgnn engine.

:class:`GCNConv`, :class:`SAGEConv`, :class:`GINConv` and :class:`GATConv` are PyG's classes (subclasses of them, with the same
constructor arguments, parameters, ``state_dict`` names and initialisation) whose ``forward`` aggregates through
the ``pimgnn::spmm`` op on an engine instead of PyG's message passing, computing what PyG computes: GCN's
normalisation with PyG's ``gcn_norm`` (edge weights, ``improved``, ``add_self_loops``), SAGE's mean (or sum),
GIN's sum and GAT's attention (its coefficients as the values of the resident structure, all heads in one call). Backward passes run on the engine too (the transposed product).

Each layer takes ``engine=EngineOptions(...)`` besides PyG's arguments (default: ``EngineOptions()``, the
simulator without hardware) and, optionally, ``graph=pimgnn.Graph(...)`` to aggregate over whatever
``edge_index`` it is given; without it, a layer turns the ``edge_index`` (and ``edge_weight``) it is called with
into a :class:`pimgnn.Graph`, cached for the same tensors. Layers over the same graph with the same options share
one resident matrix.

:func:`on_pim` moves an existing PyG model's convolutions onto an engine in place (:func:`off_pim` moves them
back), and :func:`load_state_dict` loads weights saved with ``torch.save(model.state_dict())`` or safetensors.
"""

import collections
import dataclasses
from typing import Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

try:
    import torch_geometric.nn as _pyg
    from torch_geometric.utils import softmax as _pyg_softmax
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("pimgnn.nn needs PyTorch Geometric: pip install torch-geometric") from error

from .errors import InvalidError, ShapeError
from .graph import Graph


@dataclasses.dataclass(frozen=True)
class EngineOptions:
    """How layers build their engines: the arguments of :class:`pimgnn.Engine` but the graph."""

    backend: str = "auto"
    dpus: Optional[int] = None
    tasklets: Optional[int] = None
    dtype: str = "f32"
    plan: Optional[str] = None
    widths: Optional[Sequence[int]] = None
    weighted: bool = False

    def engine(self, graph):
        """``graph``'s engine for these options, shared with every other user of the same options."""
        widths = None if self.widths is None else [int(width) for width in self.widths]
        return graph.engine(backend=self.backend, dpus=self.dpus, tasklets=self.tasklets, dtype=self.dtype,
                            plan=self.plan, widths=widths, weighted=self.weighted)


# Graphs made from edge_index tensors, by the tensors' identity, so that a layer called again with the same
# tensors (every epoch, every layer of a model) reuses the graph and its resident engines.
_GRAPH_CACHE_SIZE = 8
_graphs = collections.OrderedDict()


def _tensor_key(tensor):
    if tensor is None:
        return None
    return (tensor.data_ptr(), tuple(tensor.shape), tensor.dtype, tensor._version)


def graph_of(edge_index, num_nodes, edge_weight=None):
    """The :class:`pimgnn.Graph` of ``edge_index`` (a tensor, a sparse matrix or a graph) on ``num_nodes`` nodes,
    made once for the same tensors and kept among the last few used."""
    if isinstance(edge_index, Graph):
        if edge_weight is not None:
            raise InvalidError("edge_weight: a pimgnn.Graph carries its own weights")
        graph = edge_index
    else:
        key = (_tensor_key(edge_index) if isinstance(edge_index, torch.Tensor) else id(edge_index),
               _tensor_key(edge_weight), num_nodes)
        graph = _graphs.pop(key, None)
        if graph is None:
            graph = Graph(edge_index, num_nodes=num_nodes, edge_weight=edge_weight)
        _graphs[key] = graph
        while len(_graphs) > _GRAPH_CACHE_SIZE:
            _graphs.popitem(last=False)[1].close()
    if graph.num_nodes != num_nodes:
        raise ShapeError(f"shape mismatch in graph (one node per row of x): expected {num_nodes}, found {graph.num_nodes}")
    return graph


class _OnPim:
    """What the layers share: their engine options and graph, and a single tensor input."""

    def _bind(self, engine=None, graph=None):
        self.engine_options = engine if engine is not None else EngineOptions()
        self.pim_graph = graph

    def _graph(self, x, edge_index, edge_weight=None):
        if not isinstance(x, torch.Tensor):
            raise InvalidError(f"{type(self).__name__} on pimgnn: x must be one tensor (bipartite pairs are not supported)")
        if self.pim_graph is not None:
            return graph_of(self.pim_graph, x.size(0), edge_weight)
        return graph_of(edge_index, x.size(0), edge_weight)

    def _aggregate(self, matrix, x):
        return self.engine_options.engine(matrix).spmm(x)


class GCNConv(_OnPim, _pyg.GCNConv):
    """PyG's ``GCNConv`` aggregating on a pimgnn engine: ``D^-1/2 (A + I) D^-1/2 (x W^T) + b``."""

    def __init__(self, *args, engine: Optional[EngineOptions] = None, graph: Optional[Graph] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._bind(engine, graph)

    def forward(self, x, edge_index, edge_weight=None):
        graph = self._graph(x, edge_index, edge_weight)
        # PyG fills the self-loops with 2 for `improved` only when the edges have weights (without, every edge
        # and loop gets weight 1 after the loops are added).
        improved = self.improved and graph.weighted
        matrix = graph.gcn_norm(self.add_self_loops, improved) if self.normalize else graph
        out = self._aggregate(matrix, self.lin(x))
        return out if self.bias is None else out + self.bias


class SAGEConv(_OnPim, _pyg.SAGEConv):
    """PyG's ``SAGEConv`` aggregating on a pimgnn engine, with ``aggr="mean"`` (PyG's default) or ``"sum"``."""

    def __init__(self, *args, engine: Optional[EngineOptions] = None, graph: Optional[Graph] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._bind(engine, graph)
        self._check_aggr()

    def _check_aggr(self):
        if self.aggr not in ("mean", "sum", "add"):
            raise InvalidError(f"SAGEConv on pimgnn: aggr {self.aggr!r} is not an SpMM (mean and sum are)")

    def forward(self, x, edge_index, size=None):
        graph = self._graph(x, edge_index)
        neighbours = self.lin(x).relu() if self.project and hasattr(self, "lin") else x
        matrix = graph.mean_norm() if self.aggr == "mean" else graph.unweighted()
        out = self.lin_l(self._aggregate(matrix, neighbours))
        if self.root_weight:
            out = out + self.lin_r(x)
        return F.normalize(out, p=2.0, dim=-1) if self.normalize else out


class GINConv(_OnPim, _pyg.GINConv):
    """PyG's ``GINConv`` aggregating on a pimgnn engine: ``nn((1 + eps) x + sum_j x_j)``."""

    def __init__(self, *args, engine: Optional[EngineOptions] = None, graph: Optional[Graph] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._bind(engine, graph)

    def forward(self, x, edge_index, size=None):
        graph = self._graph(x, edge_index)
        out = self._aggregate(graph.unweighted(), x)
        return self.nn(out + (1 + self.eps) * x)


class GATConv(_OnPim, _pyg.GATConv):
    """PyG's ``GATConv`` aggregating on a pimgnn engine: the attention coefficients are computed as PyG computes
    them (its ``softmax`` over each target's incoming edges, self-loops included), then every head is aggregated
    in one call with the coefficients as the resident structure's values; their gradient is an SDDMM on the
    same engine. Edge features (``edge_dim``), bipartite inputs and ``return_attention_weights`` are refused."""

    def __init__(self, *args, engine: Optional[EngineOptions] = None, graph: Optional[Graph] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._bind(engine, graph)
        self._check_supported()

    def _check_supported(self):
        if self.lin is None or self.edge_dim is not None:
            raise InvalidError("GATConv on pimgnn: bipartite layers and edge features (edge_dim) are not supported")

    def forward(self, x, edge_index, edge_attr=None, size=None, return_attention_weights=None):
        if edge_attr is not None or return_attention_weights:
            raise InvalidError("GATConv on pimgnn: edge_attr and return_attention_weights are not supported")
        graph = self._graph(x, edge_index)
        structure = graph.attention_structure() if self.add_self_loops else graph.unweighted()
        targets, sources = _coo(structure)
        heads, width = self.heads, self.out_channels
        residual = self.res(x) if self.res is not None else None
        projected = self.lin(x).view(-1, heads, width)
        alpha_src = (projected * self.att_src).sum(dim=-1)
        alpha_dst = (projected * self.att_dst).sum(dim=-1)
        alpha = F.leaky_relu(alpha_src[sources] + alpha_dst[targets], self.negative_slope)
        alpha = _pyg_softmax(alpha, targets, num_nodes=x.size(0))
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        engine = dataclasses.replace(self.engine_options, weighted=True).engine(structure)
        out = engine.spmm(projected.reshape(-1, heads * width), values=alpha)
        out = out if self.concat else out.view(-1, heads, width).mean(dim=1)
        if residual is not None:
            out = out + residual
        return out if self.bias is None else out + self.bias


def _coo(structure):
    """The targets and sources of ``structure``'s nonzeros, in its order, as index tensors (made once)."""
    if "coo" not in structure._derived:
        indptr, indices, _ = structure.csr()
        targets = np.repeat(np.arange(structure.num_nodes, dtype=np.int64), np.diff(indptr))
        structure._derived["coo"] = (torch.from_numpy(targets), torch.from_numpy(indices))
    return structure._derived["coo"]


_ON_PIM = {_pyg.GCNConv: GCNConv, _pyg.SAGEConv: SAGEConv, _pyg.GINConv: GINConv, _pyg.GATConv: GATConv}


def _aggregation_width(module):
    """The features a layer aggregates per call (what its engine's plan is chosen for)."""
    if isinstance(module, _pyg.GCNConv):
        return module.out_channels
    if isinstance(module, _pyg.SAGEConv):
        return module.lin.out_features if module.project else module.in_channels[0]
    if isinstance(module, _pyg.GATConv):
        return module.heads * module.out_channels
    return None  # GINConv aggregates its input, whose width its nn does not say


def on_pim(model, graph=None, **engine_options):
    """Moves ``model``'s PyG ``GCNConv``, ``SAGEConv`` and ``GINConv`` layers onto pimgnn engines, in place,
    and returns it: the same parameters, ``state_dict`` and outputs, with aggregation on the engine.

    ``engine_options`` are :class:`EngineOptions`' fields; the plan is chosen for the widths the layers
    aggregate unless ``widths`` is given. With ``graph``, the layers aggregate over it whatever ``edge_index``
    they are called with. Raises :class:`pimgnn.InvalidError` when the model has none of these layers.
    """
    layers = [module for module in model.modules() if type(module) in _ON_PIM or isinstance(module, _OnPim)]
    if not layers:
        raise InvalidError(f"model {type(model).__name__}: it has no GCNConv, SAGEConv or GINConv to move onto PIM")
    if engine_options.get("widths") is None:
        widths = [width for width in map(_aggregation_width, layers) if width is not None]
        engine_options["widths"] = widths or None
    options = EngineOptions(**engine_options)
    for module in layers:
        if not isinstance(module, _OnPim):
            module.__class__ = _ON_PIM[type(module)]
        module._bind(options, graph)
        if isinstance(module, SAGEConv):
            module._check_aggr()
        if isinstance(module, GATConv):
            module._check_supported()
    return model


def off_pim(model):
    """Moves the layers :func:`on_pim` moved back to PyG's own aggregation, in place, and returns ``model``."""
    for module in model.modules():
        if isinstance(module, _OnPim):
            module.__class__ = next(pyg for pyg, ours in _ON_PIM.items() if isinstance(module, ours))
            del module.engine_options, module.pim_graph
    return model


def load_state_dict(model, path, strict=True):
    """Loads weights into ``model`` from ``path``: a safetensors file (``.safetensors``) or what
    ``torch.save(model.state_dict())`` wrote; returns what ``Module.load_state_dict`` returns."""
    path = str(path)
    if path.endswith(".safetensors"):
        from safetensors.torch import load_file

        state = load_file(path)
    else:
        state = torch.load(path, map_location="cpu", weights_only=True)
    return model.load_state_dict(state, strict=strict)


__all__ = ["EngineOptions", "GCNConv", "SAGEConv", "GINConv", "GATConv", "graph_of", "on_pim", "off_pim", "load_state_dict"]

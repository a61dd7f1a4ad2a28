"""Engines: a graph's matrix resident on the DPUs (or the CPU), multiplied with features per call."""

import itertools
import weakref

import numpy as np

from . import _native
from .errors import ShapeError

# Engines by the id the autograd op names them with (an op's arguments are tensors and plain values).
_engines = weakref.WeakValueDictionary()
_ids = itertools.count()


def engine_by_id(engine_id):
    """The live engine `engine_id` names, for the autograd op."""
    try:
        return _engines[engine_id]
    except KeyError:
        from .errors import InvalidError

        raise InvalidError(f"engine {engine_id}: it no longer exists") from None


class Timing:
    """The phases of an engine's last call, each with its wall time here and its predicted time on UPMEM
    hardware (``None`` where the engine does not model hardware, on the CPU), in seconds; printed as a table."""

    def __init__(self, phases):
        self.phases = list(phases)

    @property
    def wall(self):
        """Total wall time, in seconds."""
        return sum(phase.wall for phase in self.phases)

    @property
    def predicted(self):
        """Total predicted hardware time in seconds, or ``None`` when no phase has one."""
        predicted = [phase.predicted for phase in self.phases if phase.predicted is not None]
        return sum(predicted) if predicted else None

    def __repr__(self):
        def ms(seconds):
            return "-" if seconds is None else f"{seconds * 1e3:.3f}"

        rows = [(phase.name, ms(phase.wall), ms(phase.predicted)) for phase in self.phases]
        rows.append(("total", ms(self.wall), ms(self.predicted)))
        header = ("phase", "wall (ms)", "predicted (ms)")
        widths = [max(len(row[column]) for row in [header, *rows]) for column in range(3)]
        lines = [
            "  ".join(cell.ljust(width) if column == 0 else cell.rjust(width)
                      for column, (cell, width) in enumerate(zip(row, widths)))
            for row in [header, *rows]
        ]
        return "\n".join(lines)


class Engine:
    """A :class:`pimgnn.Graph`'s matrix ``A`` resident in an engine for every call to come.

    ``backend`` is ``"auto"`` (UPMEM hardware when the machine has it, else the simulator), ``"sim"``, ``"hw"``
    (never falls back: :class:`pimgnn.NoHardwareError` without hardware), ``"cpu"``, or ``"split"`` (rows
    shared between the DPUs and the CPU). ``dpus`` and ``tasklets`` bound the DPUs and their tasklets;
    ``dtype`` is ``"f32"`` (exact) or ``"i32"``, ``"i16"``, ``"i8"`` (quantized with explicit scales, as PyGim
    does); the plan is the one the cost model predicts fastest for calls of ``widths`` features, or ``plan``
    (as ``pimgnn bench spmm`` prints plans, e.g. ``"csr:rows=16,split=yes,cols=1,groups=4,x=whole,tasklets=16"``).

    ``spmm(x)`` computes ``A x``; ``spmm(x, transpose=True)`` computes ``A^T x``, on the same engine when ``A``
    is symmetric and on a second one, made on first use, when it is not. With ``weighted=True`` the engine keeps
    ``A``'s structure and each call gives its values, per attention head: ``spmm(x, values)``. An engine holds
    its DPUs until it is closed (:meth:`close`, or leaving a ``with`` block) or collected.
    """

    def __init__(self, graph, backend="auto", dpus=None, tasklets=None, dtype="f32", plan=None, widths=None,
                 weighted=False):
        from .graph import Graph

        if not isinstance(graph, Graph):
            graph = Graph(graph)
        self.graph = graph
        self._options = dict(backend=backend, dpus=dpus, tasklets=tasklets, dtype=dtype, plan=plan,
                             widths=None if widths is None else [int(width) for width in widths], weighted=weighted)
        self._native = _native.Engine(graph._native, **self._options)
        self._transposed = None
        self._transpose_order = None
        self.id = next(_ids)
        _engines[self.id] = self

    def spmm(self, x, values=None, transpose=False):
        """``A x`` (``A^T x`` when ``transpose``) for ``x`` of ``(nodes, features)``.

        On a ``weighted`` engine, ``values`` gives ``A``'s values for this call, in the order of its nonzeros
        (:meth:`pimgnn.Graph.csr`): one per nonzero, or ``(nonzeros, heads)`` for attention heads, head ``h``
        multiplying the ``h``-th of ``heads`` equal groups of ``x``'s columns.

        A PyTorch tensor goes through the ``pimgnn::spmm`` op (``pimgnn::spmm_values`` with values), which
        autograd differentiates: the features' gradient is the product with the transpose, the values' an SDDMM
        over ``A``'s structure. The result has ``x``'s dtype, computed in float32. A NumPy array (or anything
        NumPy converts) gives a float32 NumPy array. The result is the engine's own buffer, not a copy.
        """
        if type(x).__module__.startswith("torch"):
            from . import ops

            return ops.spmm(x, self, transpose) if values is None else ops.spmm_values(x, values, self, transpose)
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim != 2:
            raise ShapeError(f"shape mismatch in features: expected (nodes, features), found {x.shape}")
        if values is None:
            return self._resident(transpose)._native.spmm(x)
        values = np.ascontiguousarray(values, dtype=np.float32)
        return self._apply_values(x, values, transpose)

    def _apply_values(self, x, values, transpose):
        """``A' x`` (or ``A'^T x``) with ``values`` (NumPy, ``(nonzeros,)`` or ``(nonzeros, heads)``)."""
        heads = 1 if values.ndim == 1 else values.shape[1]
        if transpose:
            values = values[self._transposed_order()]
        return self._resident(transpose)._native.spmm_values(x, values.reshape(-1), heads)

    def _transposed_order(self):
        """For each nonzero of ``A^T``, in its order, the nonzero of ``A`` it is (the transpose lists ``A``'s
        entries by column, stably)."""
        if self._transpose_order is None:
            self._transpose_order = np.argsort(self.graph.csr()[1], kind="stable")
        return self._transpose_order

    def _sddmm(self, p, q):
        """``<p_i, q_j>`` for each nonzero ``(i, j)`` of ``A``, in its order (NumPy float32)."""
        return self._native.sddmm(np.ascontiguousarray(p, dtype=np.float32), np.ascontiguousarray(q, dtype=np.float32))

    def _resident(self, transpose):
        """The engine holding ``A`` (or ``A^T``)."""
        if not transpose:
            return self
        if self._transposed is None:
            if self.graph.is_symmetric() and not self._options["weighted"]:
                self._transposed = self
            else:
                self._transposed = Engine(self.graph.transpose(), **self._options)
        return self._transposed

    def timing(self):
        """The :class:`Timing` of the last call."""
        return Timing(self._native.phases())

    @property
    def shape(self):
        """``(rows, columns)`` of ``A``."""
        return self._native.shape

    @property
    def backend(self):
        """The backend it runs on: ``"simulator"``, ``"hardware"``, ``"cpu"`` or ``"split:..."``."""
        return self._native.backend

    @property
    def plan(self):
        """How it executes, in one line: the DPUs, the plan and its predicted time on PIM."""
        return self._native.plan

    @property
    def dtype(self):
        """The type it aggregates in."""
        return self._native.dtype

    @property
    def balance(self):
        """Nonzeros per DPU (``min``, ``median``, ``max``) on PIM, else ``None``."""
        return self._native.balance

    @property
    def decision(self):
        """The cost model's pick and its predictions, for ``backend="auto"`` and ``"split"``, else ``None``."""
        return self._native.decision

    def close(self):
        """Releases the DPUs (of the transposed engine too); later calls raise :class:`pimgnn.InvalidError`."""
        self._native.close()
        if self._transposed is not None and self._transposed is not self:
            self._transposed.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def __repr__(self):
        rows, cols = self.shape
        return f"Engine({rows} x {cols}, backend={self.backend!r}, dtype={self.dtype!r}, plan={self.plan!r})"

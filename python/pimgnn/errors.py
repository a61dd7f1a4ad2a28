"""The exceptions pimgnn raises: every one is a :class:`pimgnn.Error`, and also the built-in exception that
Python code would catch for its kind (``ValueError`` for bad input, ``IndexError`` for an index out of range,
``OSError`` for files, ``RuntimeError`` for the UPMEM runtime). The message is the Rust library's: it names the
input and the limit."""


class Error(Exception):
    """Every error pimgnn raises."""


class ShapeError(Error, ValueError):
    """Operands whose shapes do not fit together (features with the wrong number of rows, say)."""


class IndexOutOfRangeError(Error, IndexError):
    """An index outside its dimension (an edge naming a node past ``num_nodes``, a negative one)."""


class InvalidError(Error, ValueError):
    """An argument or structure that breaks an invariant (an unknown backend or dtype, a closed engine)."""


class FileError(Error, OSError):
    """A file that could not be read, or is malformed."""


class CapacityError(Error, ValueError):
    """Input too big for the DPUs: MRAM per DPU, DPUs in the set, 32-bit indices."""


class NotFiniteError(Error, ValueError):
    """A NaN or an infinity where quantized aggregation needs a finite number."""


class UpmemError(Error, RuntimeError):
    """The UPMEM runtime failed: allocation, loading a kernel, a transfer, a DPU fault."""


class NoHardwareError(UpmemError):
    """UPMEM hardware was asked for (``backend="hw"``) where there is none, or its SDK cannot be loaded."""


__all__ = [
    "Error",
    "ShapeError",
    "IndexOutOfRangeError",
    "InvalidError",
    "FileError",
    "CapacityError",
    "NotFiniteError",
    "UpmemError",
    "NoHardwareError",
]

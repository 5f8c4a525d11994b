"""Type stubs of hrry.stream."""

import os
from types import TracebackType
from typing import Any, Dict, Iterator, List, Optional, Protocol, Type, Union

import numpy as np
import numpy.typing as npt

from . import File, Quantized, Report

_Path = Union[str, "os.PathLike[str]"]

class _Readable(Protocol):
    def read(self, n: int, /) -> bytes: ...

class _Writable(Protocol):
    def write(self, b: bytes, /) -> Optional[int]: ...

_Source = Union[_Path, bytes, bytearray, memoryview, _Readable]
_Sink = Union[_Path, _Writable]

class Tensor:
    """One tensor of a stream, as ``StreamReader`` yields it."""
    @property
    def name(self) -> str:
        """The generated name (``t0``, ``t1``, ``t1.0``, ...: ``hrry stream unpack``'s)."""
    @property
    def index(self) -> int:
        """Position in the stream, from 0."""
    @property
    def offset(self) -> int:
        """Absolute offset of the descriptor in the stream."""
    @property
    def depth(self) -> int:
        """How many composites enclose the tensor."""
    @property
    def info(self) -> Dict[str, Any]:
        """The dict ``File.info`` gives: dtype, shape, layout, quantization, buffers."""
    @property
    def array(self) -> Optional[npt.NDArray[Any]]:
        """The array ``File.get_tensor`` gives, or None (composite head, paged layout,
        element type NumPy cannot hold)."""
    @property
    def buffers(self) -> List[bytes]:
        """The stored buffers, one per buffer-table entry."""

class StreamReader:
    """Reads a bare stream tensor by tensor, each checked against every rule
    (``InvalidFileError`` names the broken ones; a tensor beyond ``max_tensor_bytes``
    breaks ``HF-LIM-001``)."""
    def __init__(
        self, source: _Source, *, permissive: bool = False, max_tensor_bytes: int = 16 << 30
    ) -> None: ...
    def __iter__(self) -> Iterator[Tensor]: ...
    def __next__(self) -> Tensor: ...
    @property
    def position(self) -> int:
        """Bytes of the stream consumed so far (0 while another thread reads)."""

class StreamWriter:
    """Writes a bare stream to a path (renamed into place by ``finish``) or a file object."""
    def __init__(self, sink: _Sink) -> None: ...
    def write(self, array: Union[npt.ArrayLike, Quantized]) -> None: ...
    def write_tensor(self, file: File, name: str) -> None: ...
    def finish(self) -> None: ...
    @property
    def position(self) -> int: ...
    def __enter__(self) -> "StreamWriter": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

def read(
    source: _Source, *, permissive: bool = False, max_tensor_bytes: int = 16 << 30
) -> Dict[str, npt.NDArray[Any]]:
    """The stream's tensors that have an array, by generated name."""

def pack(path: _Path, sink: _Sink) -> int:
    """Writes the HRRYFILE at ``path`` as a bare stream (``hrry stream pack``)."""

def unpack(
    source: _Source, path: _Path, *, data_buffer_alignment: int = 4096, permissive: bool = False
) -> int:
    """Writes the stream's tensors to a new HRRYFILE (``hrry stream unpack``), each
    checked against every rule first (the spec's only with ``permissive=True``)."""

def validate(source: _Source, *, permissive: bool = False) -> Report:
    """Checks a bare stream against every rule; never raises for a bad stream."""

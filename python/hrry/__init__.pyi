"""Type stubs of the hrry package (the extension module is hrry._hrry)."""

import os
from types import TracebackType
from typing import (
    Any,
    BinaryIO,
    Dict,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
)

import numpy as np
import numpy.typing as npt

from . import holo as holo
from . import stream as stream

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Url = str
"""An ``http://``, ``https://`` or ``s3://`` URL (a ``str``)."""
_Source = Union[_Path, _Url, BinaryIO]
"""A path, a URL, or a binary file object with ``seek`` and ``read``."""
MetadataValue = Union[str, int, float, bool, bytes, List[str], List[int], List[float], List[bool], List[bytes]]

class HrryError(ValueError):
    """Base class of the errors hrry raises for a file or an argument it cannot accept."""

class InvalidFileError(HrryError):
    """The file breaks rules of the format; ``violations`` lists each one."""
    violations: List[Violation]

class InternalError(HrryError):
    """A bug in hrry (a Rust panic caught at the boundary)."""

class ServerError(HrryError):
    """A tensor server answered with ERROR; the connection stays usable."""
    code: int
    """The spec's ``error_code``."""
    name: str
    """Its name (``"UNKNOWN_TENSOR"``, ``"LAYOUT_UNAVAILABLE"``, …)."""
    server_message: str
    """The server's text."""

class ProtocolError(HrryError):
    """A tensor server broke the protocol (or exceeded this client's limits); the
    connection is closed."""

class Violation:
    """One broken rule, at the absolute byte offset of the offending field.
    Compares by value and pickles."""
    @property
    def rule(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def offset(self) -> int: ...
    @property
    def message(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]:
        """``{"rule", "level", "offset", "message"}``, as in ``hrry validate --json``."""
    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "Violation":
        """The violation ``to_dict`` gave (checked: ``ValueError``, ``KeyError``)."""

class Rule:
    """One rule of the rule table."""
    @property
    def id(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def reads(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def spec(self) -> str: ...

class Report:
    """The result of ``validate``. Compares by value and pickles (as plain data),
    so a cluster can ship it."""
    @property
    def valid(self) -> bool: ...
    @property
    def format(self) -> str:
        """``"hrryfile"``, ``"holo"`` or ``"stream"``."""
    @property
    def mode(self) -> str:
        """``"strict"`` or ``"permissive"``."""
    @property
    def verdict(self) -> Literal["valid", "invalid", "refused"]:
        """``"invalid"``: a spec rule is broken; ``"refused"``: valid per the spec,
        refused by the policy (a hardening or limit rule)."""
    @property
    def policy(self) -> Literal["spec", "hardened"]: ...
    @property
    def violations(self) -> List[Violation]: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def suppressed(self) -> int: ...
    @property
    def file(self) -> Optional[str]:
        """The path, the URL (without credentials) or the file object's name;
        ``None`` for bytes."""
    @property
    def remote(self) -> Optional[Dict[str, int]]:
        """For a URL or file object: ``{"requests", "bytes", "retries"}`` it cost
        (a file object's ``read`` calls and the bytes they returned)."""
    def rule_ids(self) -> List[str]: ...
    def to_dict(self) -> Dict[str, Any]:
        """JSON types only: ``file``, ``valid``, ``format``, ``mode``, ``violations``
        ``notes`` and ``remote`` (as ``hrry validate --json``; ``remote`` is ``None``
        for a local file, where the CLI leaves it out), and ``suppressed``."""
    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "Report":
        """The report ``to_dict`` gave (checked: ``ValueError``, ``KeyError``,
        ``TypeError``)."""
    def __bool__(self) -> bool: ...

class File:
    """An open HRRYFILE (from ``hrry.open``); a context manager."""
    def keys(self) -> List[str]:
        """Tensor names in index order."""
    def __len__(self) -> int: ...
    def __contains__(self, name: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __getitem__(self, name: str) -> np.ndarray: ...
    @property
    def metadata(self) -> Dict[str, MetadataValue]:
        """The KV metadata."""
    @property
    def path(self) -> str:
        """The path, the URL (without credentials) or the file object's name."""
    @property
    def remote(self) -> Optional[Dict[str, int]]:
        """For a URL or file object: ``{"requests", "bytes", "retries"}`` so far."""
    @property
    def closed(self) -> bool: ...
    def info(self, name: str) -> dict:
        """``dtype``, ``shape``, ``layout``, ``quantization`` and ``buffers`` of a tensor."""
    @property
    def copy_on_write(self) -> bool:
        """True when views are writeable (a private copy-on-write mapping)."""
    def get_tensor(self, name: str, *, widen: bool = True) -> np.ndarray:
        """The array ``hrry export`` writes; a view when no conversion is needed
        (read-only unless opened ``copy_on_write``). ``widen=False``: bfloat16,
        float8, float6 and float4 as ``ml_dtypes`` arrays of the stored codes."""
    def dequantize(
        self,
        name: str,
        *,
        out: Optional[npt.NDArray[np.float32]] = None,
        threads: Optional[int] = None,
    ) -> npt.NDArray[np.float32]:
        """Float32 values of a quantized tensor (``hrry dequant -o``), into ``out``
        or a new array (large ones reuse freed outputs: ``set_buffer_cache``);
        ``threads`` caps the threads one call uses (default: one per core)."""
    def stats(self) -> dict:
        """Parameter counts per element type and each tensor's value statistics
        (``count``, ``min``, ``max``, ``mean``, ``std``, ``nan``, ``inf``, ``zeros``,
        ``histogram``), as ``hrry.stats``."""
    def close(self) -> None: ...
    def __enter__(self) -> "File": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class Client:
    """A blocking connection to a tensor server (``hrry serve``); a context manager.

    Network work runs with the GIL released. ``OSError`` (``ConnectionRefusedError``,
    …) when the server cannot be reached, ``TimeoutError`` when ``timeout`` seconds
    pass on a read or write (``None``: wait forever), ``ServerError`` when the server
    answers with ERROR. After any failure but a ``ServerError`` the client is closed.
    """
    def __init__(
        self, address: Union[str, Tuple[str, int]], *, timeout: Optional[float] = None
    ) -> None: ...
    def fetch(self, key: str, *, layout: Union[str, int, None] = None) -> np.ndarray:
        """Tensor ``key`` as the array ``hrry fetch -o X.npy`` writes (what
        ``File.get_tensor`` gives for the served file). Row-major is requested (the
        server transcodes) unless ``layout`` names another layout."""
    def fetch_raw(
        self, key: str, *, layout: Union[str, int, None] = None
    ) -> List[Tuple[dict, List[bytes]]]:
        """Tensor ``key`` as received (stored layout unless ``layout`` is given): one
        ``(info, buffers)`` pair per tensor of the response (a composite's head, then
        its members); ``info`` as ``File.info``."""
    def put(self, file: Union[File, _Source], key: str, *, as_key: Optional[str] = None) -> None:
        """Pushes tensor ``key`` of ``file`` to the server, stored under ``as_key`` or
        ``key`` (``hrry put``)."""
    def ping(self, data: Optional[bytes] = None) -> float:
        """PING/PONG round trip, in seconds."""
    @property
    def address(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Client": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class Quantized:
    """A per-block affine quantized tensor (from ``quantize``), for ``save_file``."""
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def scheme(self) -> str: ...
    @property
    def block_size(self) -> int: ...
    @property
    def axis(self) -> int: ...
    @property
    def symmetric(self) -> bool: ...
    @property
    def scale_dtype(self) -> str: ...
    @property
    def nbytes(self) -> int: ...
    def dequantize(
        self,
        *,
        out: Optional[npt.NDArray[np.float32]] = None,
        threads: Optional[int] = None,
    ) -> npt.NDArray[np.float32]: ...

def open(
    source: Union[_Source, bytes, bytearray, memoryview],
    *,
    permissive: bool = False,
    check: Literal["metadata", "full", "trusted"] = "metadata",
    copy_on_write: bool = False,
    timeout: Optional[float] = None,
    stall_timeout: Optional[float] = None,
    retries: Optional[int] = None,
    policy: Optional[Literal["spec", "hardened"]] = None,
    max_memory: Optional[int] = None,
) -> File:
    """Map and open a HRRYFILE, checking its metadata (``check="full"``: every rule);
    ``copy_on_write=True`` maps it privately, giving writeable views (local files
    only). A URL or file object is read as needed: its metadata now, a tensor's
    bytes when first asked for (``File.remote`` says what that cost). For a URL,
    ``timeout`` (seconds per request, 120), ``stall_timeout`` (seconds a transfer
    may bring under 1 KiB, 15) and ``retries`` (4) bound the network reads.
    ``max_memory`` (bytes, 2 GiB by default) caps the memory budget for what the
    metadata describes; past it, ``InvalidFileError`` with ``HF-LIM-001``."""

def load_file(
    source: Union[_Source, bytes, bytearray, memoryview],
    *,
    widen: bool = True,
    timeout: Optional[float] = None,
    stall_timeout: Optional[float] = None,
    retries: Optional[int] = None,
    mmap: bool = False,
    max_memory: Optional[int] = None,
) -> Dict[str, np.ndarray]:
    """Every tensor of a HRRYFILE, like ``safetensors.numpy.load_file``: a local
    file is read once into private memory, so the arrays (writeable) are its
    contents at load time and independent of it afterwards. ``mmap=True`` gives
    views of a private copy-on-write mapping instead, which follow the file (a
    rewrite changes them, a truncation is ``SIGBUS``: docs/security.md). A URL or
    file object gives arrays of their own; ``timeout``, ``stall_timeout`` and
    ``retries`` as for `open`; ``max_memory`` as for `open` (the metadata's
    budget, not the copy of the file)."""

def save_file(
    tensors: Mapping[str, Union[np.ndarray, Quantized]],
    path: _Path,
    metadata: Optional[Mapping[str, MetadataValue]] = None,
) -> None:
    """Write tensors (and metadata) as a HRRYFILE, atomically, like ``safetensors.numpy.save_file``."""

def diff(
    a: Union[str, "os.PathLike[str]"],
    b: Union[str, "os.PathLike[str]"],
    *,
    metadata_only: bool = False,
    tolerance: float = 0.0,
) -> dict:
    """Compare two model files (HRRYFILE, safetensors, GGUF; paths or URLs) on
    tensors, metadata and logical values, as ``hrry diff --json``."""

def stats(source: Union[str, "os.PathLike[str]"]) -> dict:
    """``parameters`` (per element type), ``tensors`` (name to statistics of its
    values, or ``{"error": reason}``) and ``findings`` (statistics sections that
    disagree with the values) of a model file of any format hrry reads."""

def validate(
    source: Union[_Source, bytes, bytearray, memoryview],
    *,
    permissive: bool = False,
    timeout: Optional[float] = None,
    stall_timeout: Optional[float] = None,
    retries: Optional[int] = None,
    policy: Optional[Literal["spec", "hardened"]] = None,
    max_memory: Optional[int] = None,
) -> Report:
    """Check a HRRYFILE or .holo archive against every rule; never raises for a bad
    file. A URL or file object is read at the offsets the rules need (never the
    tensor data); ``OSError`` when it cannot be read (``FileNotFoundError`` for a
    missing URL), a file object's own exception when its ``seek``/``read`` raises.
    ``timeout``, ``stall_timeout`` and ``retries`` as for `open`. ``max_memory``
    (bytes, 2 GiB by default) caps the memory budget; past it the verdict is
    ``"refused"`` with ``HF-LIM-001`` naming ``max_memory``."""

def rules() -> List[Rule]:
    """The rule table."""

def quantize(
    array: npt.ArrayLike,
    scheme: str = "int4",
    block_size: int = 32,
    *,
    axis: int = -1,
    symmetric: bool = True,
    scale_dtype: str = "float16",
) -> Quantized:
    """Per-block affine quantization (int4/int8/... storage) for ``save_file``."""

def set_buffer_cache(max_bytes: int) -> int:
    """Bytes of freed ``dequantize`` outputs kept for reuse (default 256 MiB; 0
    turns reuse off and frees them); returns the previous limit."""

def buffer_cache() -> Dict[str, int]:
    """``{"limit", "held", "buffers"}``: the state of the ``dequantize`` output cache."""

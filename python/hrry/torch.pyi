"""Type stubs of hrry.torch: PyTorch tensors from HRRYFILEs with safetensors.torch's API."""

import os
from types import TracebackType
from typing import Dict, List, NamedTuple, Optional, Type, Union

import torch

from . import MetadataValue

_Path = Union[str, "os.PathLike[str]"]
_Device = Union[str, torch.device, int]

ALIAS_NAMES_KEY: str
"""KV key of save_model's alias table: the tied names stored under another name."""
ALIAS_TARGETS_KEY: str
"""KV key of save_model's alias table: the name each alias is stored as."""

def torch_dtype(element_type: str) -> torch.dtype:
    """The torch dtype a tensor of ``element_type`` loads as; ``TypeError`` if none."""

def load_file(
    filename: _Path, device: _Device = "cpu", *, dtype: Optional[torch.dtype] = None
) -> Dict[str, torch.Tensor]:
    """Every tensor, in index order, on ``device``; CPU tensors view a private
    copy-on-write mapping. ``dtype``: of dequantized tensors (float32 by default)."""

def load(
    data: bytes, device: _Device = "cpu", *, dtype: Optional[torch.dtype] = None
) -> Dict[str, torch.Tensor]:
    """``load_file`` of a HRRYFILE held in ``data``."""

def save_file(
    tensors: Dict[str, torch.Tensor],
    filename: _Path,
    metadata: Optional[Dict[str, MetadataValue]] = None,
) -> None:
    """Writes ``tensors`` (each by value, in its own dtype) atomically."""

def save(
    tensors: Dict[str, torch.Tensor], metadata: Optional[Dict[str, MetadataValue]] = None
) -> bytes:
    """``save_file`` into ``bytes``."""

class _Slice:
    def get_shape(self) -> List[int]: ...
    def get_dtype(self) -> str:
        """safetensors' dtype name (``"BF16"``, …), else the element type's."""
    def __getitem__(self, index: object) -> torch.Tensor: ...

class safe_open:
    """An open HRRYFILE giving torch tensors one at a time; a context manager."""
    def __init__(
        self,
        filename: _Path,
        framework: str = "pt",
        device: _Device = "cpu",
        *,
        dtype: Optional[torch.dtype] = None,
    ) -> None: ...
    def keys(self) -> List[str]: ...
    def metadata(self) -> Dict[str, MetadataValue]: ...
    def get_tensor(self, name: str) -> torch.Tensor: ...
    def get_slice(self, name: str) -> _Slice: ...
    def close(self) -> None: ...
    def __enter__(self) -> "safe_open": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class LoadResult(NamedTuple):
    missing: List[str]
    unexpected: List[str]

def save_model(
    model: torch.nn.Module, filename: _Path, metadata: Optional[Dict[str, MetadataValue]] = None
) -> None:
    """``model.state_dict()``, tied tensors stored once (an alias table in the KV)."""

def load_model(
    model: torch.nn.Module, filename: _Path, strict: bool = True, device: _Device = "cpu"
) -> LoadResult:
    """Loads a ``save_model`` file into ``model``, restoring ties; missing and unexpected keys."""

"""PyTorch tensors from Hurray tensor files (HRRYFILE), with the names and shapes of
``safetensors.torch``, so that switching is one import::

    import hrry.torch
    tensors = hrry.torch.load_file("model.hrry")            # views of one mapping
    hrry.torch.save_file(tensors, "copy.hrry", metadata={"producer": "me"})
    with hrry.torch.safe_open("model.hrry", framework="pt") as f:
        emb = f.get_slice("tok_embd.weight")[:16]           # reads those rows only
    missing, unexpected = hrry.torch.load_model(model, "model.hrry")

Every element type comes out as itself: float16, bfloat16, float32, float64,
int8-int64, uint8 (uint16/32/64 and float8_e8m0fnu where the installed torch has
them), bool, complex64/128, float8_e4m3 as ``torch.float8_e4m3fn`` and float8_e5m2 as
``torch.float8_e5m2`` -- never widened. float4_e2m1 comes out as
``torch.float4_e2m1fn_x2`` where the installed torch has it: two values a byte, the
first in the low four bits, so the last dimension is halved (as safetensors' ``F4``
loads); an odd last dimension cannot be paired. Quantized tensors come out
dequantized (float32, or ``dtype=``); integers narrower than a byte widen to
int8/uint8; a type without a torch dtype (float6, float128, extension types)
raises ``TypeError`` naming the tensor and its type, and so does ``load_file``,
whose other tensors ``safe_open(...).get_tensor(name)`` still reads one by one. A
group composite's head has no value of its own: reading it names its members,
which are read one by one.

On the CPU a tensor whose stored bytes already are the tensor (dense, row-major) is
a view of the file's mapping, private and copy-on-write: nothing is read until it is
touched, writing into it never changes the file, and PyTorch gives no "not
writable" warning. Other tensors (other layouts, booleans, which are stored as bits,
quantized ones) are new tensors. For any other ``device`` the tensors are copied
there from the mapping in pieces of at most 64 MiB.
"""

import os
import warnings
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch

from . import _hrry

__all__ = [
    "load",
    "load_file",
    "load_model",
    "safe_open",
    "save",
    "save_file",
    "save_model",
    "torch_dtype",
]

# Element type (as File.info names it) -> torch dtype, for the types torch has.
_TORCH_DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "bool": torch.bool,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
    "float8_e4m3": torch.float8_e4m3fn,
    "float8_e5m2": torch.float8_e5m2,
    # Narrower than a byte: the values widened to a byte each.
    "int4": torch.int8,
    "int2": torch.int8,
    "uint4": torch.uint8,
    "uint2": torch.uint8,
}
# Types only recent torch releases have.
for _kind, _attr in (
    ("uint16", "uint16"),
    ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("float8_e8m0", "float8_e8m0fnu"),
):
    if hasattr(torch, _attr):
        _TORCH_DTYPES[_kind] = getattr(torch, _attr)

# torch dtype -> element type, for writing (sub-byte integers are not written).
_STORED_TYPES = {
    dtype: kind
    for kind, dtype in _TORCH_DTYPES.items()
    if kind not in ("int4", "int2", "uint4", "uint2")
}

# The element types whose codes File._stored carries in an integer array of the
# same width, reinterpreted here without copying.
_CARRIED = ("bfloat16", "float8_e4m3", "float8_e5m2", "float8_e8m0")

# safetensors' names of the dtypes, for get_slice(...).get_dtype().
_SAFETENSORS_NAMES = {
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float32: "F32",
    torch.float64: "F64",
    torch.int8: "I8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.uint8: "U8",
    torch.bool: "BOOL",
    torch.complex64: "C64",
    torch.float8_e4m3fn: "F8_E4M3",
    torch.float8_e5m2: "F8_E5M2",
}

# The KV keys of save_model's alias table: parallel lists of tied names and the
# name of the tensor each one is stored as.
ALIAS_NAMES_KEY = "hrry.torch.alias_names"
ALIAS_TARGETS_KEY = "hrry.torch.alias_targets"

# Largest piece copied at once to a device other than the CPU.
_PIECE_BYTES = 64 << 20


def torch_dtype(element_type: str) -> torch.dtype:
    """The torch dtype a tensor of ``element_type`` (a name as ``File.info`` gives
    it) loads as; ``TypeError`` for a type without one. float4_e2m1 loads as
    ``torch.float4_e2m1fn_x2`` (values in pairs) where torch has it."""
    if element_type == "float4_e2m1" and hasattr(torch, "float4_e2m1fn_x2"):
        return torch.float4_e2m1fn_x2
    dtype = _TORCH_DTYPES.get(element_type)
    if dtype is None:
        raise TypeError(
            f"element type {element_type} has no torch dtype"
            f" (torch {torch.__version__})"
        )
    return dtype


def _as_torch(file: _hrry.File, name: str, dtype: Optional[torch.dtype]) -> torch.Tensor:
    """Tensor ``name`` of ``file`` on the CPU: a view of the mapping where the stored
    bytes allow, else a new tensor."""
    kind, array = file._stored(name)
    if kind == "quantized":
        tensor = torch.from_numpy(array)
        return tensor if dtype is None or dtype == tensor.dtype else tensor.to(dtype)
    if kind == "float4_e2m1":
        return _float4_pairs(file, name, array)
    target = _TORCH_DTYPES.get(kind)
    if target is None:
        raise TypeError(
            f"{file.path}: tensor {name!r} is {kind}, which has no torch dtype"
            f" (torch {torch.__version__}); safe_open(...).get_tensor(name) reads the"
            " other tensors one by one"
        )
    if not array.flags.writeable and _repeats(array):
        tensor = _repeated_view(file, name, array)
    else:
        if not array.flags.writeable:
            # Only read-only files give read-only arrays; copy rather than hand out
            # a tensor PyTorch would let be written.
            array = array.copy()
        tensor = torch.from_numpy(array)
    if kind in _CARRIED:
        tensor = tensor.view(target)
    if tensor.dtype != target:
        raise AssertionError(f"tensor {name!r}: {tensor.dtype} for {kind}")
    return tensor


def _repeats(array) -> bool:
    """Whether ``array`` views bytes that repeat (a broadcast tensor: a stride of 0
    along a dimension longer than 1), as ``File._stored`` gives them."""
    return any(s == 0 and n > 1 for s, n in zip(array.strides, array.shape))


def _repeated_view(file: _hrry.File, name: str, array) -> torch.Tensor:
    """A broadcast tensor as a zero-stride view of its stored bytes, never a copy
    (which may be gigabytes from a file of kilobytes). PyTorch has no read-only
    tensors: writing one writes every element that shares its bytes (in private
    memory, never the file); ``.clone()`` it to get a tensor of its own."""
    if any(s < 0 for s in array.strides):
        raise _hrry.HrryError(
            f"{file.path}: tensor {name!r} repeats its stored bytes with negative strides,"
            " which a torch view cannot hold; read it with hrry.open(...).get_tensor"
        )
    with warnings.catch_warnings():
        # The array is read-only; PyTorch warns that its tensor is not.
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array)


def _float4_pairs(file: _hrry.File, name: str, codes) -> torch.Tensor:
    """The float4_e2m1 tensor ``name`` as ``torch.float4_e2m1fn_x2``: its codes
    (one a byte, as ``File._stored`` gives them) packed two a byte, the first of
    each pair in the low four bits, the last dimension halved."""
    pairs = getattr(torch, "float4_e2m1fn_x2", None)
    why = None
    if pairs is None:
        why = f"torch {torch.__version__} has no float4_e2m1fn_x2"
    elif codes.ndim == 0 or codes.shape[-1] % 2:
        why = "float4_e2m1fn_x2 holds values in pairs along the last dimension, which is odd"
    if why is not None:
        raise TypeError(
            f"{file.path}: tensor {name!r} is float4_e2m1 and {why}; "
            "safe_open(...).get_tensor(name) reads the other tensors one by one"
        )
    codes = torch.from_numpy(codes.copy() if not codes.flags.writeable else codes)
    packed = (codes[..., 0::2] & 0x0F) | ((codes[..., 1::2] & 0x0F) << 4)
    return packed.contiguous().view(pairs)


def _on_device(tensor: torch.Tensor, device) -> torch.Tensor:
    """``tensor`` (on the CPU) on ``device``, copied in pieces of at most
    ``_PIECE_BYTES`` so that no second full-size host copy is made."""
    device = torch.device(device)
    if device.type == "cpu":
        return tensor
    out = torch.empty(tensor.shape, dtype=tensor.dtype, device=device)
    _copy_in_pieces(tensor, out, _PIECE_BYTES)
    return out


def _copy_in_pieces(source: torch.Tensor, out: torch.Tensor, piece_bytes: int) -> None:
    """Copies ``source`` into ``out`` (of its shape and dtype) a run of at most
    ``piece_bytes`` bytes of elements at a time, in row-major order."""
    flat_source = source.reshape(-1)
    flat_out = out.view(-1)
    step = max(1, piece_bytes // max(1, source.element_size()))
    for start in range(0, flat_source.numel(), step):
        flat_out[start : start + step].copy_(flat_source[start : start + step])


def _load_all(file: _hrry.File, device, dtype) -> Dict[str, torch.Tensor]:
    return {name: _on_device(_as_torch(file, name, dtype), device) for name in file.keys()}


def load_file(
    filename, device="cpu", *, dtype: Optional[torch.dtype] = None
) -> Dict[str, torch.Tensor]:
    """Every tensor of the HRRYFILE ``filename``, in index order, on ``device``
    (like ``safetensors.torch.load_file``). The file is checked as ``hrry.open``
    checks it (``hrry.InvalidFileError``). ``dtype`` is the dtype of dequantized
    tensors (float32 by default); other tensors keep their own. The tensors view a
    private copy-on-write mapping of the file: a file rewritten by another process
    changes their values, and one truncated kills the process with ``SIGBUS`` when
    they are touched (docs/security.md); ``hrry.load_file`` reads the file instead."""
    with _hrry.open(os.fspath(filename), copy_on_write=True) as file:
        return _load_all(file, device, dtype)


def load(data: bytes, device="cpu", *, dtype: Optional[torch.dtype] = None) -> Dict[str, torch.Tensor]:
    """Every tensor of a HRRYFILE held in ``data`` (like ``safetensors.torch.load``);
    the bytes are copied once into private memory that the tensors view."""
    with _hrry._open_bytes(data, copy_on_write=True) as file:
        return _load_all(file, device, dtype)


def _stored_items(tensors: Dict[str, torch.Tensor]) -> List[Tuple[str, str, List[int], object]]:
    """``tensors`` as ``_hrry._save_stored`` takes them: name, element type, shape
    and the stored codes as a flat uint8 array (each tensor by value: made
    contiguous, moved to the CPU)."""
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of str to torch.Tensor, not {type(tensors).__name__}")
    items = []
    for name, tensor in tensors.items():
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"tensor {name!r}: not a torch.Tensor but {type(tensor).__name__}")
        if tensor.layout != torch.strided:
            raise TypeError(f"tensor {name!r}: layout {tensor.layout} (save a dense tensor)")
        kind = _STORED_TYPES.get(tensor.dtype)
        if kind is None:
            raise TypeError(f"tensor {name!r}: cannot store torch dtype {tensor.dtype}")
        value = tensor.detach().to("cpu").contiguous()
        codes = value.reshape(-1).view(torch.uint8).numpy()
        items.append((name, kind, list(value.shape), codes))
    return items


def save_file(
    tensors: Dict[str, torch.Tensor], filename, metadata: Optional[Dict[str, object]] = None
) -> None:
    """Writes ``tensors`` to ``filename`` as a HRRYFILE, atomically (like
    ``safetensors.torch.save_file``). Each tensor is written by value in its own
    dtype: non-contiguous tensors, and tensors sharing storage, each get their own
    copy of the data. ``metadata`` takes what ``hrry.save_file`` takes (``str``
    values, as safetensors, and ``int``, ``float``, ``bool``, ``bytes`` or lists)."""
    _hrry._save_stored(_stored_items(tensors), os.fspath(filename), metadata)


def save(tensors: Dict[str, torch.Tensor], metadata: Optional[Dict[str, object]] = None) -> bytes:
    """``save_file`` into ``bytes`` (like ``safetensors.torch.save``)."""
    return _hrry._save_stored(_stored_items(tensors), None, metadata)


class _Slice:
    """One tensor of a ``safe_open`` file, indexed lazily: ``[...]`` gives the
    indexed part."""

    def __init__(self, opened: "safe_open", name: str):
        self._opened = opened
        self._name = name
        self._info = opened._file.info(name)

    def get_shape(self) -> List[int]:
        """The tensor's shape."""
        return list(self._info["shape"])

    def get_dtype(self) -> str:
        """safetensors' name of the dtype the tensor loads as (``"BF16"``, …), or
        the element type's name when safetensors has none."""
        kind = "float32" if self._info["quantization"] is not None else self._info["dtype"]
        dtype = _TORCH_DTYPES.get(kind)
        return _SAFETENSORS_NAMES.get(dtype, kind)

    def __getitem__(self, index) -> torch.Tensor:
        # A view of the mapping until indexed: only the pages of the part taken are
        # read (for tensors stored dense and row-major).
        whole = _as_torch(self._opened._file, self._name, self._opened._dtype)
        return _on_device(whole[index], self._opened._device)


class safe_open:
    """An open HRRYFILE giving torch tensors one at a time (like
    ``safetensors.safe_open``); a context manager. ``framework`` must name PyTorch
    (``"pt"``). Tensors from one ``safe_open`` share its private mapping: a write
    into one is seen by later ``get_tensor`` calls for the same name, never by the
    file."""

    def __init__(self, filename, framework: str = "pt", device="cpu", *, dtype: Optional[torch.dtype] = None):
        if framework not in ("pt", "torch", "pytorch"):
            raise ValueError(f"hrry.torch.safe_open gives torch tensors: framework must be \"pt\", not {framework!r}")
        self._file = _hrry.open(os.fspath(filename), copy_on_write=True)
        self._device = device
        self._dtype = dtype

    def keys(self) -> List[str]:
        """Tensor names in index order."""
        return self._file.keys()

    def metadata(self) -> Dict[str, object]:
        """The file's KV metadata."""
        return self._file.metadata

    def get_tensor(self, name: str) -> torch.Tensor:
        """Tensor ``name`` on the device given to ``safe_open``."""
        return _on_device(_as_torch(self._file, name, self._dtype), self._device)

    def get_slice(self, name: str) -> _Slice:
        """Tensor ``name`` to index: ``get_slice(name)[rows]`` reads only the rows
        taken when the tensor is stored dense and row-major."""
        return _Slice(self, name)

    def close(self) -> None:
        """Closes the file; tensors already taken stay valid."""
        self._file.close()

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


class LoadResult(NamedTuple):
    """What ``load_model`` did not match: keys the model has and the file lacks,
    and keys the file has and the model lacks."""

    missing: List[str]
    unexpected: List[str]


def _tied_groups(state: Dict[str, torch.Tensor]) -> Dict[str, str]:
    """``{alias: name}`` for every entry of ``state`` that is the very same tensor
    as an earlier entry (same storage, offset, shape, strides and dtype): tied
    parameters. Tensors that merely overlap are not ties and are saved by value."""
    first: Dict[tuple, str] = {}
    aliases: Dict[str, str] = {}
    for name, tensor in state.items():
        if tensor.numel() == 0:
            continue
        key = (
            tensor.device,
            tensor.untyped_storage().data_ptr(),
            tensor.storage_offset(),
            tuple(tensor.shape),
            tensor.stride(),
            tensor.dtype,
        )
        if key in first:
            aliases[name] = first[key]
        else:
            first[key] = name
    return aliases


def save_model(model: torch.nn.Module, filename, metadata: Optional[Dict[str, object]] = None) -> None:
    """Writes ``model.state_dict()`` to ``filename``. Tied parameters (one tensor
    under several names) are stored once, under their first name; the other names
    go into an alias table in the KV metadata, which ``load_model`` reads."""
    state = model.state_dict()
    aliases = _tied_groups(state)
    kv = dict(metadata or {})
    for key in (ALIAS_NAMES_KEY, ALIAS_TARGETS_KEY):
        if key in kv:
            raise ValueError(f"metadata key {key!r} is reserved for the alias table")
    if aliases:
        kv[ALIAS_NAMES_KEY] = list(aliases)
        kv[ALIAS_TARGETS_KEY] = list(aliases.values())
    tensors = {name: t for name, t in state.items() if name not in aliases}
    save_file(tensors, filename, metadata=kv)


def _alias_table(metadata: Dict[str, object]) -> Dict[str, str]:
    names = metadata.get(ALIAS_NAMES_KEY, [])
    targets = metadata.get(ALIAS_TARGETS_KEY, [])
    if not (isinstance(names, list) and isinstance(targets, list) and len(names) == len(targets)):
        raise ValueError(f"the alias table ({ALIAS_NAMES_KEY}, {ALIAS_TARGETS_KEY}) is malformed")
    if not all(isinstance(n, str) for n in names + targets):
        raise ValueError("the alias table holds names that are not strings")
    return dict(zip(names, targets))


def _retie(model: torch.nn.Module, aliases: Dict[str, str]) -> None:
    """Makes each alias parameter of ``model`` the very parameter it is tied to,
    where the model holds them as two parameters."""
    params = dict(model.named_parameters(remove_duplicate=False))
    for alias, target in aliases.items():
        if alias in params and target in params and params[alias] is not params[target]:
            owner_name, _, attr = alias.rpartition(".")
            owner = model.get_submodule(owner_name) if owner_name else model
            setattr(owner, attr, params[target])


def load_model(model: torch.nn.Module, filename, strict: bool = True, device="cpu") -> LoadResult:
    """Loads ``filename`` (written by ``save_model``) into ``model``; returns the
    missing and unexpected keys. With ``strict`` either kind raises
    ``RuntimeError``. Tied parameters are restored from the alias table: each alias
    gets its target's values, and a model holding them as separate parameters is
    tied again."""
    with _hrry.open(os.fspath(filename), copy_on_write=True) as file:
        aliases = _alias_table(file.metadata)
        state = _load_all(file, device, None)
    for alias, target in aliases.items():
        if target not in state:
            raise ValueError(f"alias {alias!r} names {target!r}, which the file does not hold")
        state[alias] = state[target]
    expected = set(model.state_dict())
    missing = sorted(expected - set(state))
    unexpected = sorted(set(state) - expected)
    if strict and (missing or unexpected):
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(model).__name__}:"
            f" missing keys {missing}, unexpected keys {unexpected}"
        )
    model.load_state_dict({k: v for k, v in state.items() if k in expected}, strict=False)
    _retie(model, aliases)
    return LoadResult(missing, unexpected)

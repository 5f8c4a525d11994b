"""Type stubs of hrry.holo."""

import os
from types import TracebackType
from typing import BinaryIO, Dict, List, Optional, Type, Union

class Section:
    """One section of a .holo archive."""
    @property
    def kind(self) -> str: ...
    @property
    def number(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def length(self) -> int: ...
    @property
    def data(self) -> memoryview:
        """The payload, a read-only view of the mapping."""

class Archive:
    """An opened .holo archive; a context manager."""
    @property
    def format_version(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def fingerprint(self) -> bytes: ...
    @property
    def sections(self) -> List[Section]: ...
    @property
    def weights(self) -> Dict[str, memoryview]: ...
    @property
    def extensions(self) -> Dict[str, memoryview]: ...
    @property
    def inputs(self) -> List[dict]: ...
    @property
    def outputs(self) -> List[dict]: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Archive": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def open(
    source: Union[str, "os.PathLike[str]", BinaryIO, bytes, bytearray, memoryview],
    *,
    timeout: Optional[float] = None,
    stall_timeout: Optional[float] = None,
    retries: Optional[int] = None,
    max_memory: Optional[int] = None,
) -> Archive:
    """Map and verify a .holo archive (strict): a path (mapped), an http://,
    https:// or s3:// URL or a binary file object (read whole into private memory:
    the closing hash covers every byte), or bytes. ``timeout``, ``stall_timeout``
    and ``retries`` as for `hrry.open`. ``max_memory`` (bytes, 2 GiB by default)
    caps the memory budget for what the sections describe (not the mapping);
    past it, ``InvalidFileError`` with ``HF-LIM-001``."""

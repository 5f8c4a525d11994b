"""``.holo`` compiled-model archives: ``hrry.holo.open(path)`` verifies an archive
(every rule, the closing BLAKE3 hash included) and gives its sections, weights and
extensions as read-only ``memoryview``s of the file mapping."""

from ._hrry import Archive, Section
from ._hrry import holo_open as open

__all__ = ["Archive", "Section", "open"]

"""``.holo`` compiled-model archives: ``hrry.holo.open(source)`` verifies an archive
(every rule, the closing BLAKE3 hash included) and gives its sections, weights and
extensions as read-only ``memoryview``s of the file mapping. ``source`` is a path,
a URL (``http://``, ``https://``, ``s3://``) or a binary file object (read whole:
the hash covers every byte), or bytes."""

from ._hrry import Archive, Section
from ._hrry import holo_open as open

__all__ = ["Archive", "Section", "open"]

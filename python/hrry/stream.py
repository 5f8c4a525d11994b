"""Bare Hurray streams: tensors as descriptors and data back to back, no names and
no index, read and written in one forward pass over a file, a pipe or a socket.

    import hrry.stream
    for t in hrry.stream.StreamReader("model.hrrys"):   # or bytes, or a file object
        print(t.name, t.info["dtype"], t.array.shape)   # t0, t1, t1.0, ...
    with hrry.stream.StreamWriter("out.hrrys") as w:
        w.write(numpy.arange(6, dtype="float32").reshape(2, 3))
    hrry.stream.pack("model.hrry", "model.hrrys")       # = hrry stream pack
    hrry.stream.unpack("model.hrrys", "copy.hrry")      # = hrry stream unpack
    report = hrry.stream.validate("model.hrrys")        # = hrry stream validate

The readers hold one tensor at a time; each is checked against every rule before
it is handed out, and a broken stream raises ``hrry.InvalidFileError`` naming the
rules (``ST-...`` for the stream's framing).
"""

from ._hrry import StreamReader, StreamWriter
from ._hrry import Tensor
from ._hrry import stream_pack as pack
from ._hrry import stream_unpack as unpack
from ._hrry import stream_validate as validate


def read(source, *, permissive=False, max_tensor_bytes=16 << 30):
    """Reads the whole stream ``source`` (a path, bytes or a binary file object)
    into a ``dict`` of generated names to NumPy arrays, in stream order, like
    ``hrry.load_file``. Tensors without an array (composite heads, whose members
    follow as their own entries; paged layouts; element types NumPy cannot hold)
    are left out: iterate a `StreamReader` to see them."""
    return {
        t.name: t.array
        for t in StreamReader(
            source, permissive=permissive, max_tensor_bytes=max_tensor_bytes
        )
        if t.array is not None
    }


__all__ = ["StreamReader", "StreamWriter", "Tensor", "pack", "read", "unpack", "validate"]

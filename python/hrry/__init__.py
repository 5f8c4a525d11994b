"""Strict, zero-copy loading of Hurray tensor files (HRRYFILE) and ``.holo``
archives into NumPy (and PyTorch: ``hrry.torch``).

    import hrry
    with hrry.open("model.hrry") as f:          # maps and validates (strict)
        w = f.get_tensor("weights")            # read-only view, no copy
        q = f.dequantize("blk.0.attn_q")       # float32, GIL released
    tensors = hrry.load_file("model.hrry")     # like safetensors.numpy.load_file
    hrry.save_file({"w": w}, "copy.hrry", metadata={"producer": "me"})
    with hrry.Client("127.0.0.1:7070") as c:   # a tensor server (`hrry serve`)
        e = c.fetch("tok_embd.weight")

Arrays returned by ``get_tensor`` view the file mapping when the stored bytes
already are the array, and keep the mapping alive after ``File.close()``.
``hrry.open``'s are read-only (NumPy's ``__dlpack__`` exports them to consumers of
DLPack 1.0 or later, ``numpy.from_dlpack`` for one); those of
``hrry.open(path, copy_on_write=True)`` view a private copy-on-write mapping:
writeable without copying, and writing never changes the file. A mapped array
follows its file: if another process rewrites the file its values change, and if
it truncates the file, touching the array kills the process with ``SIGBUS``.
``load_file`` reads the file once into private memory instead: its arrays are the
file's contents at load time, writeable, and independent of the file afterwards
(``load_file(path, mmap=True)`` maps it, with the hazard above).
``widen=False`` keeps bfloat16 and float8 as ``ml_dtypes`` arrays. For PyTorch,
``hrry.torch`` has ``safetensors.torch``'s API.

Arrays returned by ``dequantize`` are new, writeable float32 arrays. Large ones reuse
the memory of earlier outputs of the same size once those are freed (up to 256 MiB
is kept; see ``set_buffer_cache``), which spares the page faults of fresh memory;
``dequantize(name, out=array)`` fills an array of your own.
"""

from . import holo, stream
from ._hrry import (
    Client,
    File,
    HrryError,
    InternalError,
    InvalidFileError,
    ProtocolError,
    Quantized,
    Report,
    Rule,
    ServerError,
    Violation,
    __version__,
    buffer_cache,
    diff,
    load_file,
    open,
    quantize,
    rules,
    save_file,
    set_buffer_cache,
    stats,
    validate,
)

__all__ = [
    "Client",
    "File",
    "HrryError",
    "InternalError",
    "InvalidFileError",
    "ProtocolError",
    "Quantized",
    "Report",
    "Rule",
    "ServerError",
    "Violation",
    "__version__",
    "buffer_cache",
    "diff",
    "holo",
    "load_file",
    "open",
    "quantize",
    "rules",
    "save_file",
    "set_buffer_cache",
    "stats",
    "stream",
    "validate",
]

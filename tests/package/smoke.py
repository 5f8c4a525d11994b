"""Smoke test of an installed `hrry` wheel: open, validate, load_file, and
hrry.torch when torch is installed. Run from outside the source tree, so that
`import hrry` is the installed package. Usage: smoke.py CORPUS_DIR."""

import os
import sys

import numpy as np

import hrry

corpus = sys.argv[1]
basic = os.path.join(corpus, "valid", "basic.hrry")
assert "site-packages" in hrry.__file__, hrry.__file__

with hrry.open(basic) as f:
    names = list(f.keys())
    assert names, "no tensors"
    first = f.get_tensor(names[0])
    assert isinstance(first, np.ndarray)

report = hrry.validate(basic)
assert report.valid, report
bad = hrry.validate(os.path.join(corpus, "invalid", "HF-CRC-001.hrry"))
assert not bad.valid
assert "HF-CRC-001" in bad.rule_ids(), bad.rule_ids()

tensors = hrry.load_file(basic)
assert set(tensors) == set(names)
assert np.array_equal(tensors[names[0]], first)

try:
    import torch  # noqa: F401
except ImportError:
    torch_checked = "torch absent: hrry.torch not checked"
else:
    import hrry.torch

    loaded = hrry.torch.load_file(basic)
    assert set(loaded) == set(names)
    assert np.array_equal(loaded[names[0]].numpy(), first)
    torch_checked = "hrry.torch.load_file checked"

print(f"smoke test passed: hrry {hrry.__version__}, {len(names)} tensors; {torch_checked}")

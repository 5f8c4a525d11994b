"""hrry.torch: every element type as its own torch dtype (over the whole corpus),
safetensors files converted by `hrry convert` loading bit for bit, save/load round
trips that validate strictly, tied weights through save_model/load_model, tensors
that view the file's private mapping, and safe_open's slices."""

import hashlib
import json
import math
import warnings

import numpy as np
import pytest

from conftest import CORPUS, corpus_path, manifest_entries, mapped_ranges, optional, run_hrry, same_floats

torch = optional("torch")
import hrry  # noqa: E402
import hrry.torch  # noqa: E402

VALID_HRRY = [e for e in manifest_entries() if e["valid"] and e["format"] == "hrryfile"]

# The table: the torch dtype each element type loads as.
TABLE = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "bool": torch.bool,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
    "float8_e4m3": torch.float8_e4m3fn,
    "float8_e5m2": torch.float8_e5m2,
    "float8_e8m0": torch.float8_e8m0fnu,
    "int4": torch.int8,
    "int2": torch.int8,
    "uint4": torch.uint8,
    "uint2": torch.uint8,
}
# Element types torch has no dtype for: refused by name.
REFUSED = {"float4_e2m1", "float6_e2m3", "float6_e3m2", "float128", "extension"}
# Dtypes NumPy lacks: compared through their widened float32 values and their codes.
CODED = {torch.bfloat16: np.int16, torch.float8_e4m3fn: np.uint8, torch.float8_e5m2: np.uint8, torch.float8_e8m0fnu: np.uint8}


def raw(tensor):
    """The bytes of a CPU tensor, C order (bool as 0/1 bytes)."""
    return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def expected_dtype(info):
    if info["quantization"] is not None:
        return torch.float32
    return TABLE.get(info["dtype"])


def test_corpus_covers_the_table():
    seen = set()
    for entry in VALID_HRRY:
        with hrry.open(corpus_path(entry)) as f:
            for name in f.keys():
                info = f.info(name)
                seen.add("quantized" if info["quantization"] else info["dtype"])
    assert set(TABLE) - seen == set(), "element types of the table no corpus file holds"
    assert REFUSED <= seen and "quantized" in seen


@pytest.mark.parametrize("entry", VALID_HRRY, ids=[e["path"] for e in VALID_HRRY])
def test_valid_file_loads_every_tensor_as_its_dtype(entry):
    path = corpus_path(entry)
    loadable = True
    with hrry.open(path) as f, hrry.torch.safe_open(path, framework="pt") as t:
        assert t.keys() == f.keys()
        for name in f.keys():
            info = f.info(name)
            try:
                want = f.get_tensor(name)
            except hrry.HrryError:
                # What the NumPy side cannot read, the torch side refuses too.
                with pytest.raises((hrry.HrryError, TypeError)):
                    t.get_tensor(name)
                loadable = False
                continue
            dtype = expected_dtype(info)
            if dtype is None:
                assert info["dtype"] in REFUSED
                with pytest.raises(TypeError, match=info["dtype"]):
                    t.get_tensor(name)
                loadable = False
                continue
            got = t.get_tensor(name)
            assert got.dtype == dtype and tuple(got.shape) == info["shape"]
            if dtype in CODED:
                same_floats(got.float().numpy(), want)
                codes = f.get_tensor(name, widen=False)
                assert raw(got) == np.ascontiguousarray(codes).tobytes()
            else:
                assert got.numpy().dtype == want.dtype
                assert raw(got) == np.ascontiguousarray(want).tobytes()
    if loadable:
        tensors = hrry.torch.load_file(path)
        with hrry.torch.safe_open(path) as t:
            assert list(tensors) == t.keys()
            for name, tensor in tensors.items():
                one = t.get_tensor(name)
                assert tensor.dtype == one.dtype and raw(tensor) == raw(one)
    else:
        with pytest.raises((hrry.HrryError, TypeError)):
            hrry.torch.load_file(path)


@pytest.mark.parametrize("layout", ["strided-reversed", "tiled-nested", "hilbert", "morton"])
def test_float8_in_other_layouts_comes_out_row_major(tmp_path, layout):
    # The corpus's uint8 tensor of this layout, retyped as float8_e4m3 (same width):
    # its codes in logical order are the uint8 values `get_tensor` gives.
    source = f"{CORPUS}/valid/layout-{layout}.hrry"
    data = bytearray(open(source, "rb").read())
    descriptor = 64  # the file's one descriptor; type_tag is its byte 14
    assert data[descriptor : descriptor + 4] == b"HRRY" and data[descriptor + 14] == 0x11
    data[descriptor + 14] = 0x40  # float8_e4m3
    path = tmp_path / "f8.hrry"
    path.write_bytes(bytes(data))
    assert hrry.validate(path).valid
    with hrry.open(source) as f:
        codes = f.get_tensor("t")
    got = hrry.torch.load_file(path)["t"]
    assert got.dtype == torch.float8_e4m3fn
    assert got.view(torch.uint8).numpy().tolist() == codes.tolist()


def random_bits(dtype, shape, seed):
    """A tensor of ``dtype`` whose bytes are random (NaN payloads, infinities and
    subnormals included); booleans random 0/1."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g) == 1
    size = torch.empty((), dtype=dtype).element_size()
    count = math.prod(shape)
    codes = torch.randint(0, 256, (count * size,), dtype=torch.uint8, generator=g)
    return codes.view(dtype).reshape(shape)


SAFETENSORS_DTYPES = [
    torch.bfloat16,
    torch.float16,
    torch.float32,
    torch.float64,
    torch.int8,
    torch.int64,
    torch.uint8,
    torch.bool,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]


def test_safetensors_file_converted_loads_bit_identical(tmp_path, hrry_bin):
    st = optional("safetensors.torch")
    tensors = {str(d).split(".")[-1]: random_bits(d, (3, 5), i) for i, d in enumerate(SAFETENSORS_DTYPES)}
    tensors["scalar"] = torch.tensor(2.5, dtype=torch.float32)
    tensors["empty"] = torch.zeros((0, 3), dtype=torch.bfloat16)
    source, converted = tmp_path / "m.safetensors", tmp_path / "m.hrry"
    st.save_file(tensors, str(source))
    done = run_hrry("convert", str(source), str(converted))
    assert done.returncode == 0, done.stderr
    loaded = hrry.torch.load_file(converted)
    assert set(loaded) == set(tensors)
    for name, want in tensors.items():
        got = loaded[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert raw(got) == raw(want), name
    assert hrry.validate(converted).valid


# Every dtype hrry.torch writes.
WRITTEN = [d for k, d in TABLE.items() if k not in ("int4", "int2", "uint4", "uint2")]


def test_save_file_and_load_file_keep_every_bit(tmp_path, hrry_bin):
    tensors = {str(d).split(".")[-1]: random_bits(d, (4, 3), i) for i, d in enumerate(WRITTEN)}
    tensors["scalar"] = random_bits(torch.bfloat16, (), 99)
    tensors["empty"] = torch.zeros((2, 0), dtype=torch.float8_e5m2)
    path = tmp_path / "all.hrry"
    hrry.torch.save_file(tensors, path, metadata={"producer": "test", "step": 3})
    done = run_hrry("validate", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    report = hrry.validate(path)
    assert report.valid and report.mode == "strict"
    for loaded in (hrry.torch.load_file(path), hrry.torch.load(path.read_bytes())):
        assert list(loaded) == list(tensors)
        for name, want in tensors.items():
            got = loaded[name]
            assert got.dtype == want.dtype and got.shape == want.shape, name
            assert raw(got) == raw(want), name
    with hrry.torch.safe_open(path, framework="pt") as f:
        assert f.metadata() == {"producer": "test", "step": 3}


def test_save_and_load_bytes(tmp_path):
    tensors = {"w": random_bits(torch.bfloat16, (8, 8), 1), "b": torch.tensor([True, False])}
    data = hrry.torch.save(tensors, metadata={"k": "v"})
    assert isinstance(data, bytes) and hrry.validate(data).valid
    path = tmp_path / "w.hrry"
    hrry.torch.save_file(tensors, path, metadata={"k": "v"})
    assert path.read_bytes() == data
    loaded = hrry.torch.load(data)
    assert raw(loaded["w"]) == raw(tensors["w"]) and loaded["b"].tolist() == [True, False]
    loaded["w"].add_(1)  # private memory: writeable
    with pytest.raises(hrry.HrryError):
        hrry.torch.load(data[:-3])


def test_non_contiguous_and_shared_tensors_are_saved_by_value(tmp_path):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    tensors = {"base": base, "transposed": base.t(), "row": base[1], "every_other": base[:, ::2]}
    path = tmp_path / "views.hrry"
    hrry.torch.save_file(tensors, path)
    loaded = hrry.torch.load_file(path)
    for name, want in tensors.items():
        assert torch.equal(loaded[name], want) and loaded[name].is_contiguous()
    assert hrry.validate(path).valid


def test_what_has_no_element_type_is_refused(tmp_path):
    with pytest.raises(TypeError, match="float8_e4m3fnuz"):
        hrry.torch.save_file({"q": torch.zeros(2, dtype=torch.float8_e4m3fnuz)}, tmp_path / "q.hrry")
    with pytest.raises(TypeError, match="layout"):
        hrry.torch.save_file({"s": torch.eye(3).to_sparse()}, tmp_path / "s.hrry")
    with pytest.raises(TypeError, match="not a torch.Tensor"):
        hrry.torch.save_file({"n": np.zeros(2)}, tmp_path / "n.hrry")
    assert not (tmp_path / "q.hrry").exists()


def test_quantized_tensors_come_out_dequantized():
    path = f"{CORPUS}/valid/quant-per-block-int4-f16.hrry"
    as_float32 = hrry.torch.load_file(path)
    as_float16 = hrry.torch.load_file(path, dtype=torch.float16)
    with hrry.open(path) as f:
        for name in f.keys():
            if f.info(name)["quantization"] is None:
                continue
            values = f.dequantize(name)
            assert as_float32[name].dtype == torch.float32
            assert np.array_equal(as_float32[name].numpy(), values)
            assert torch.equal(as_float16[name], torch.from_numpy(values).half())


class Tied(torch.nn.Module):
    """A language-model shape: the output head shares the embedding's weight."""

    def __init__(self, untie=False):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 4)
        self.norm = torch.nn.LayerNorm(4)
        self.head = torch.nn.Linear(4, 11, bias=False)
        if untie:
            self.head.weight = torch.nn.Parameter(torch.zeros(11, 4))
        else:
            self.head.weight = self.emb.weight


def test_save_model_stores_a_tie_once_and_load_model_restores_it(tmp_path):
    torch.manual_seed(0)
    model = Tied()
    path = tmp_path / "model.hrry"
    hrry.torch.save_model(model, path, metadata={"arch": "tied"})
    with hrry.open(path) as f:
        assert "head.weight" not in f.keys() and "emb.weight" in f.keys()
        assert f.metadata[hrry.torch.ALIAS_NAMES_KEY] == ["head.weight"]
        assert f.metadata[hrry.torch.ALIAS_TARGETS_KEY] == ["emb.weight"]
        assert f.metadata["arch"] == "tied"
    assert hrry.validate(path).valid
    for fresh in (Tied(), Tied(untie=True)):
        result = hrry.torch.load_model(fresh, path)
        assert result == ([], []) and result.missing == [] and result.unexpected == []
        assert fresh.head.weight is fresh.emb.weight
        for name, want in model.state_dict().items():
            assert torch.equal(fresh.state_dict()[name], want), name


def test_load_model_reports_missing_and_unexpected_keys(tmp_path):
    path = tmp_path / "model.hrry"
    hrry.torch.save_model(Tied(), path)
    bigger = torch.nn.ModuleDict({"emb": torch.nn.Embedding(11, 4), "extra": torch.nn.Linear(2, 2)})
    with pytest.raises(RuntimeError, match="extra.weight"):
        hrry.torch.load_model(bigger, path)
    missing, unexpected = hrry.torch.load_model(bigger, path, strict=False)
    assert missing == ["extra.bias", "extra.weight"]
    assert unexpected == ["head.weight", "norm.bias", "norm.weight"]


def test_cpu_tensors_view_the_private_mapping(tmp_path):
    path = tmp_path / "w.hrry"
    hrry.torch.save_file({"w": torch.arange(4096, dtype=torch.float32).reshape(64, 64)}, path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not writable" warning
        w = hrry.torch.load_file(path)["w"]
        w.mul_(2)
    ranges = mapped_ranges(path)
    ptr = w.untyped_storage().data_ptr()
    assert any(s <= ptr and ptr + w.untyped_storage().nbytes() <= e for s, e in ranges)
    assert w[1, 0].item() == 128.0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert hrry.torch.load_file(path)["w"][1, 0].item() == 64.0


def test_safe_open_slices_view_only_the_rows_taken(tmp_path):
    path = tmp_path / "emb.hrry"
    table = random_bits(torch.bfloat16, (1024, 64), 5)
    hrry.torch.save_file({"emb": table}, path)
    with hrry.torch.safe_open(path, framework="pt") as f:
        part = f.get_slice("emb")
        assert part.get_shape() == [1024, 64] and part.get_dtype() == "BF16"
        rows = part[100:104]
        assert raw(rows) == raw(table[100:104])
        # A view of the mapping at those rows' place: nothing else was read.
        start, _ = next((s, e) for s, e in mapped_ranges(path) if s <= rows.data_ptr() < e)
        offset = rows.data_ptr() - start
        with open(path, "rb") as fh:
            fh.seek(offset)
            assert fh.read(4 * 64 * 2) == raw(table[100:104])
    with pytest.raises(ValueError, match="framework"):
        hrry.torch.safe_open(path, framework="np")


def test_other_devices_get_copies_in_bounded_pieces():
    source = random_bits(torch.bfloat16, (33, 7), 3)
    out = torch.empty_like(source)
    hrry.torch._copy_in_pieces(source, out, 10)  # five elements a piece
    assert raw(out) == raw(source)
    loaded = hrry.torch.load_file(f"{CORPUS}/valid/basic.hrry", device="meta")
    assert all(t.device.type == "meta" for t in loaded.values())
    with hrry.open(f"{CORPUS}/valid/basic.hrry") as f:
        assert {n: tuple(t.shape) for n, t in loaded.items()} == {n: f.info(n)["shape"] for n in f.keys()}


def test_torch_dtype_names_the_refused_type():
    assert hrry.torch.torch_dtype("bfloat16") == torch.bfloat16
    assert hrry.torch.torch_dtype("float4_e2m1") == torch.float4_e2m1fn_x2
    with pytest.raises(TypeError, match="float6_e2m3"):
        hrry.torch.torch_dtype("float6_e2m3")


def _safetensors_bytes(tensors):
    """A safetensors file of ``tensors``: (name, dtype, shape, data bytes) each."""
    header, data = {}, b""
    for name, dtype, shape, payload in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data


def test_float4_loads_as_pairs_and_an_odd_one_leaves_the_rest_readable(tmp_path):
    # Codes 1..7, 0 and their pairs, first in the low four bits (safetensors' F4).
    packed = bytes([0x21, 0x43, 0x65, 0x07])
    source = tmp_path / "f4.safetensors"
    source.write_bytes(_safetensors_bytes([
        ("f4", "F4", [2, 4], packed),
        ("x", "F32", [2], np.array([1.5, -2.0], dtype="<f4").tobytes()),
    ]))
    path = tmp_path / "f4.hrry"
    done = run_hrry("convert", str(source), str(path))
    assert done.returncode == 0, done.stderr
    tensors = hrry.torch.load_file(path)
    f4 = tensors["f4"]
    assert f4.dtype == torch.float4_e2m1fn_x2 and tuple(f4.shape) == (2, 2)
    assert f4.view(torch.uint8).numpy().tobytes() == packed
    assert tensors["x"].tolist() == [1.5, -2.0]
    # An odd last dimension cannot be paired: that tensor alone is refused, named,
    # and safe_open reads the others.
    odd = f"{CORPUS}/valid/all_element_types.hrry"
    with pytest.raises(TypeError, match=r"'float4_e2m1'.*safe_open"):
        hrry.torch.load_file(odd)
    with hrry.torch.safe_open(odd, framework="pt") as t:
        assert t.get_tensor("float32").dtype == torch.float32
        with pytest.raises(TypeError, match="odd"):
            t.get_tensor("float4_e2m1")


def test_a_group_composite_names_its_members():
    path = f"{CORPUS}/valid/composite_nested_group.hrry"
    with hrry.open(path) as f:
        with pytest.raises(hrry.HrryError, match=r"group composite.*one by one: \"inner\", \"last\""):
            f.get_tensor("head")
        assert f.get_tensor("last").shape == (2,)
    with hrry.torch.safe_open(path, framework="pt") as t:
        with pytest.raises(hrry.HrryError, match="group composite"):
            t.get_tensor("head")


INVALID_HRRY = [e for e in manifest_entries() if not e["valid"] and e["format"] == "hrryfile"]
RULES = {r.id: r for r in hrry.rules()}


@pytest.mark.parametrize("entry", INVALID_HRRY, ids=[e["path"] for e in INVALID_HRRY])
def test_invalid_file_is_refused_naming_a_broken_rule(entry):
    path = corpus_path(entry)
    broken = hrry.validate(path).rule_ids()
    openers = {
        "load_file": hrry.torch.load_file,
        "load": lambda p: hrry.torch.load(open(p, "rb").read()),
        "safe_open": lambda p: hrry.torch.safe_open(p).keys(),
    }
    for label, opener in openers.items():
        if RULES[entry["rule"]].reads == "metadata":
            with pytest.raises(hrry.InvalidFileError) as raised:
                opener(path)
            assert raised.value.violations[0].rule in broken, label
        else:
            # Opening checks metadata only: a file breaking data rules alone loads,
            # or fails on what its tensors hold, with an error of the package.
            try:
                opener(path)
            except (hrry.HrryError, TypeError):
                pass

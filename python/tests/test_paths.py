"""What opening a path that is not a readable regular file raises: a directory is
`IsADirectoryError` ("not a regular file (it is a directory)", naming it), not the
"No such device" that mapping a directory gives; a missing file is
`FileNotFoundError`."""

import pytest

import hrry
import hrry.holo


OPENERS = {
    "open": hrry.open,
    "load_file": hrry.load_file,
    "validate": hrry.validate,
    "holo.open": hrry.holo.open,
    "open copy_on_write": lambda p: hrry.open(p, copy_on_write=True),
}


@pytest.mark.parametrize("opener", list(OPENERS), ids=list(OPENERS))
def test_a_directory_is_said_to_be_one(tmp_path, opener):
    with pytest.raises(IsADirectoryError) as raised:
        OPENERS[opener](tmp_path)
    assert raised.value.filename == str(tmp_path)
    assert "not a regular file (it is a directory)" in str(raised.value)
    assert "No such device" not in str(raised.value)


@pytest.mark.parametrize("opener", list(OPENERS), ids=list(OPENERS))
def test_a_missing_file_is_not_found(tmp_path, opener):
    with pytest.raises(FileNotFoundError):
        OPENERS[opener](tmp_path / "missing.hrry")

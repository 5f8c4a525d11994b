"""Child process of test_mutations.py: feeds mutated corpus files to every entry
point and prints each unexpected outcome. A crash of the interpreter shows as the
process dying by a signal; an exception other than HrryError (InternalError, which
means a Rust panic, included) is printed and makes the exit status 1.

Usage: python mutate_child.py SEED ROUNDS FILE..."""

import os
import random
import shutil
import sys
import tempfile
import traceback

import numpy as np

import hrry

BOUNDARY = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 2**31, 2**32 - 1, 2**63, 2**64 - 1]


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.randrange(5)
    if not data:
        return bytes(rng.randbytes(rng.randrange(1, 64)))
    if kind == 0:  # flip bits
        for _ in range(rng.randrange(1, 9)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif kind == 1:  # random bytes
        for _ in range(rng.randrange(1, 5)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 2:  # truncate
        del data[rng.randrange(len(data)) :]
    elif kind == 3:  # a boundary integer over 2, 4 or 8 bytes, often near the ends
        width = rng.choice([2, 4, 8])
        value = rng.choice(BOUNDARY) & ((1 << (8 * width)) - 1)
        at = rng.choice([rng.randrange(min(256, len(data))), max(0, len(data) - rng.randrange(1, 200)), rng.randrange(len(data))])
        data[at : at + width] = value.to_bytes(width, "little")
    else:  # insert or delete a run
        at = rng.randrange(len(data))
        if rng.random() < 0.5:
            data[at:at] = rng.randbytes(rng.randrange(1, 16))
        else:
            del data[at : at + rng.randrange(1, 16)]
    return bytes(data)


def exercise(path, data):
    """Calls every entry point; returns nothing, raises what is unexpected."""
    hrry.validate(data)
    hrry.validate(path)
    hrry.validate(path, permissive=True)
    for permissive in (False, True):
        try:
            f = hrry.open(path, permissive=permissive)
        except hrry.InvalidFileError:
            continue
        with f:
            f.metadata
            for name in f.keys():
                for call in (f.info, f.get_tensor, f.dequantize):
                    try:
                        call(name)
                    except hrry.InternalError:
                        raise
                    except hrry.HrryError:
                        pass
    try:
        hrry.load_file(path)
    except hrry.InternalError:
        raise
    except hrry.HrryError:
        pass
    try:
        with hrry.holo.open(path) as a:
            for s in a.sections:
                bytes(s.data)
            a.weights, a.extensions, a.inputs, a.outputs
    except hrry.InternalError:
        raise
    except hrry.HrryError:
        pass


def main():
    seed, rounds, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    rng = random.Random(seed)
    failures = 0
    work = tempfile.mkdtemp(prefix="hrry-mutate-")
    path = os.path.join(work, "m.bin")
    cases = 0
    for source in files:
        original = open(source, "rb").read()
        for r in range(rounds):
            data = original
            for _ in range(rng.randrange(1, 4)):
                data = mutate(data, rng)
            with open(path, "wb") as f:
                f.write(data)
            cases += 1
            try:
                exercise(path, data)
            except hrry.InternalError as e:
                failures += 1
                print(f"PANIC {source} round {r}: {e}", flush=True)
            except hrry.HrryError:
                pass  # an invalid file refused: expected
            except Exception:  # noqa: BLE001 - any other exception is a finding
                failures += 1
                print(f"UNEXPECTED {source} round {r}:\n{traceback.format_exc()}", flush=True)
            if failures:
                with open(os.path.join(work, f"fail-{cases}.bin"), "wb") as f:
                    f.write(data)
    if failures:
        print(f"{cases} mutated inputs, {failures} failure(s); inputs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
        print(f"{cases} mutated inputs, no failure")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

"""Lets the PyPI torch wheel import on a machine without CUDA, for the CPU tests.

PyPI's Linux torch wheel is a CUDA build: its libraries link against CUDA's
(cuBLAS, cuDNN, NCCL, …), which come from NVIDIA's wheels, gigabytes that CPU use
never calls. Installed with ``pip install --no-deps torch``, ``import torch`` then
fails to find them. This script gives each missing library a stub: a shared
library of that name defining every symbol torch imports from it (with the
symbol versions torch asks for), each a function returning 100
(``cudaErrorNoDevice``), so the loader is satisfied and ``torch.cuda.is_available()``
is false. The stubs go into torch's own ``lib/`` directory; nothing is done when
``import torch`` already works.

Usage: ``python cuda_stubs.py`` with the venv's interpreter (needs gcc, nm, readelf
and ldd). Exits non-zero if torch still does not import.
"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile

# Libraries whose symbols torch imports unversioned, by symbol prefix.
UNVERSIONED = {
    "nccl": "libnccl.so.2",
    "cusparseLt": "libcusparseLt.so.0",
    "cuFile": "libcufile.so.0",
    "nvshmem": "libnvshmem_host.so.3",
}
DRIVER = "libcuda.so.1"


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def torch_imports():
    done = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, text=True)
    return done.returncode == 0, done.stderr.strip().splitlines()[-1:] or [""]


def torch_libraries(torch_dir):
    lib = os.path.join(torch_dir, "lib")
    names = [os.path.join(lib, n) for n in sorted(os.listdir(lib)) if n.endswith(".so")]
    names += [os.path.join(torch_dir, n) for n in sorted(os.listdir(torch_dir)) if n.startswith("_C") and n.endswith(".so")]
    return names


def missing_and_versions(libraries):
    """The sonames the loader cannot find, and which file each needed symbol
    version belongs to."""
    missing, version_file = set(), {}
    for path in libraries:
        for line in run("ldd", path).splitlines():
            m = re.match(r"\s*(\S+) => not found", line)
            if m:
                missing.add(m.group(1))
        current = None
        for line in run("readelf", "-V", "-W", path).splitlines():
            m = re.search(r"File: (\S+)", line)
            if m:
                current = m.group(1)
                continue
            m = re.search(r"Name: (\S+)", line)
            if m and current:
                version_file[m.group(1)] = current
    return missing, version_file


def imported_symbols(libraries, missing, version_file):
    """``{soname: {version or None: {symbol}}}`` for every undefined symbol that a
    missing library would have provided."""
    symbols = {so: {} for so in missing}
    prefixes = sorted(UNVERSIONED.items(), key=lambda kv: -len(kv[0]))
    for path in libraries:
        out = run("nm", "-D", "--undefined-only", "--with-symbol-versions", path)
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 2 or parts[0] != "U":
                continue
            name = parts[1]
            if "@" in name:
                symbol, version = name.split("@", 1)
                version = version.lstrip("@")
                owner = version_file.get(version)
                if owner in symbols:
                    symbols[owner].setdefault(version, set()).add(symbol)
                continue
            owner = next((so for p, so in prefixes if name.startswith(p)), None)
            if owner is None and re.match(r"cu[A-Z]", name):
                owner = DRIVER
            if owner in symbols:
                symbols[owner].setdefault(None, set()).add(name)
    return symbols


def build_stub(soname, by_version, out_dir, work):
    source = ["/* stub: every function reports no CUDA device (cudaErrorNoDevice) */"]
    script = []
    n = 0
    for version, names in sorted(by_version.items(), key=lambda kv: kv[0] or ""):
        for symbol in sorted(names):
            source.append(f'int stub_{n}(void) __asm__("{symbol}");')
            source.append(f"int stub_{n}(void) {{ return 100; }}")
            n += 1
        if version:
            script.append(f"{version} {{ global: {'; '.join(sorted(names))}; }};")
    c_file = os.path.join(work, soname + ".c")
    with open(c_file, "w") as f:
        f.write("\n".join(source) + "\n")
    args = ["gcc", "-shared", "-fPIC", "-O0", "-o", os.path.join(out_dir, soname), f"-Wl,-soname,{soname}", c_file]
    if script:
        map_file = os.path.join(work, soname + ".map")
        with open(map_file, "w") as f:
            f.write("\n".join(script) + "\n")
        args.append(f"-Wl,--version-script={map_file}")
    subprocess.run(args, check=True)


def main():
    ok, _ = torch_imports()
    if ok:
        return 0
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        print("cuda_stubs: torch is not installed", file=sys.stderr)
        return 1
    torch_dir = list(spec.submodule_search_locations)[0]
    libraries = torch_libraries(torch_dir)
    missing, version_file = missing_and_versions(libraries)
    symbols = imported_symbols(libraries, missing, version_file)
    out_dir = os.path.join(torch_dir, "lib")
    with tempfile.TemporaryDirectory() as work:
        for soname, by_version in sorted(symbols.items()):
            build_stub(soname, by_version, out_dir, work)
    ok, error = torch_imports()
    if not ok:
        print(f"cuda_stubs: torch still does not import: {error[0]}", file=sys.stderr)
        return 1
    print(f"cuda_stubs: {len(symbols)} CUDA libraries stubbed in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

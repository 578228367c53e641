"""Inputs files are UTF-8 whatever the caller's locale: a CI runner in the plain C locale
(LC_ALL=C, without Python's UTF-8 coercion) reads `name: "é"` as the user wrote it, as the
engine does, never as ASCII (a refusal) or another code page (another value).

Each check runs in a child interpreter of this very package under LC_ALL=C with the coercion
and UTF-8 mode off, as a runner would. The child imports the package from its folder, so a
mutant `make mutation` makes is not in it: the readers' checks are made once more in this
process, with its LC_CTYPE set to C for the test alone (`c_ctype`)."""

from __future__ import annotations

import json
import locale
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import hybridops_tf
from hybridops_tf.inputs.declarations import VariableSpec
from hybridops_tf.inputs.sources import load_inputs_file
from hybridops_tf.inputs.values import module_layers

PACKAGE_ROOT = Path(hybridops_tf.__file__).resolve().parents[1]


def _in_c_locale(code: str, *args: str) -> str:
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
           "PYTHONPATH": str(PACKAGE_ROOT)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                         encoding="utf-8", timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_an_inputs_file_is_read_as_utf8_in_the_c_locale(tmp_path: Path) -> None:
    path = tmp_path / "prod.yml"
    path.write_text('name: "é"\n', encoding="utf-8")
    code = ("import json, sys; from hybridops_tf.inputs.values import load_inputs_file; "
            "print(json.dumps(load_inputs_file(sys.argv[1])))")
    assert json.loads(_in_c_locale(code, str(path))) == {"name": "é"}


def test_a_modules_tfvars_is_read_as_utf8_in_the_c_locale(tmp_path: Path) -> None:
    (tmp_path / "terraform.tfvars").write_text('name = "é"\n', encoding="utf-8")
    code = ("import json, sys; from pathlib import Path; "
            "from hybridops_tf.inputs.declarations import VariableSpec; "
            "from hybridops_tf.inputs.values import module_layers; "
            "layers = module_layers(Path(sys.argv[1]), {'name': VariableSpec('name', required=True)}, {}); "
            "print(json.dumps([[layer.source, dict(layer.values), layer.opaque] for layer in layers]))")
    assert json.loads(_in_c_locale(code, str(tmp_path))) == [["env", {}, False],
                                                              ["terraform.tfvars", {"name": "é"}, False]]


def test_the_rerun_inputs_document_is_the_files_utf8_text_in_the_c_locale(tmp_path: Path) -> None:
    code = ("import json, sys; from pathlib import Path; from hybridops_tf.base.files import PreparedWrite; "
            "from hybridops_tf.operation.run_inputs import commit_rerun\n"
            "class Kept:\n"
            "    def put_document(self, kind, name, text): print(json.dumps(text))\n"
            "data = 'name: \"\\u00e9\"\\n'.encode('utf-8')\n"
            "commit_rerun(PreparedWrite(Path(sys.argv[1]) / 'rerun.inputs.yml', data), Kept(), 'm')")
    assert json.loads(_in_c_locale(code, str(tmp_path))) == 'name: "é"\n'


@pytest.fixture
def c_ctype() -> Iterator[None]:
    """This process's LC_CTYPE set to C (ASCII) for one test: an `open` that names no encoding
    then reads ASCII. Skipped in UTF-8 mode, where such an `open` reads UTF-8 whatever the locale."""
    if sys.flags.utf8_mode:
        pytest.skip("Python's UTF-8 mode: the locale does not choose the encoding")
    kept = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        assert locale.getpreferredencoding(False).lower().replace("-", "") != "utf8"
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, kept)


@pytest.mark.usefixtures("c_ctype")
def test_an_inputs_file_is_read_as_utf8_when_this_process_reads_ascii(tmp_path: Path) -> None:
    path = tmp_path / "prod.yml"
    path.write_text('name: "é"\n', encoding="utf-8")
    assert load_inputs_file(path) == {"name": "é"}


@pytest.mark.usefixtures("c_ctype")
def test_a_modules_tfvars_is_read_as_utf8_when_this_process_reads_ascii(tmp_path: Path) -> None:
    (tmp_path / "terraform.tfvars").write_text('name = "é"\n', encoding="utf-8")
    layers = module_layers(tmp_path, {"name": VariableSpec("name", required=True)}, {})
    assert [(layer.source, dict(layer.values), layer.opaque) for layer in layers] == [
        ("env", {}, False), ("terraform.tfvars", {"name": "é"}, False)]


@pytest.mark.usefixtures("c_ctype")
def test_the_rerun_inputs_document_is_the_files_utf8_text_when_this_process_reads_ascii(tmp_path: Path) -> None:
    from hybridops_tf.base.files import PreparedWrite
    from hybridops_tf.operation.run_inputs import commit_rerun

    kept: list[str] = []

    class Kept:
        def put_document(self, kind: str, name: str, text: str) -> None:
            kept.append(text)

    commit_rerun(PreparedWrite(tmp_path / "rerun.inputs.yml", 'name: "é"\n'.encode()), Kept(), "m")  # type: ignore[arg-type]
    assert kept == ['name: "é"\n']

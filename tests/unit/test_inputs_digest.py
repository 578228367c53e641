"""Issue 10 case 8: `inputs_digest` is keyed (HMAC-SHA256 under a random per-root key), so a
record and a short guess list never recover a secret; the key is made once per runtime
root, 0600, and two processes never make two keys. No engine."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.inputs.declarations import VariableSpec
from hybridops_tf.inputs.values import DIGEST_PREFIX, resolve_inputs
from hybridops_tf.operation import run_inputs
from hybridops_tf.runtime.root import Runtime

SECRET = "hunter2"
SPECS = {"password": VariableSpec("password", required=True, sensitive=True),
         "size": VariableSpec("size", required=False, default="small", type_expr="string")}


def _resolved(password: str = SECRET):
    return resolve_inputs(SPECS, var_options={"password": password, "size": "large"})


def test_same_inputs_and_same_key_give_the_same_digest() -> None:
    key = os.urandom(32)
    assert _resolved().digest(key) == _resolved().digest(key)
    assert _resolved().digest(key) != _resolved("hunter3").digest(key)


def test_a_different_key_gives_a_different_digest() -> None:
    assert _resolved().digest(b"a" * 32) != _resolved().digest(b"b" * 32)


def test_no_plain_sha256_of_the_secret_or_the_inputs_appears_in_the_digest() -> None:
    digest = _resolved().digest(os.urandom(32))
    canonical = json.dumps({"password": SECRET, "size": "large"}, sort_keys=True, separators=(",", ":"))
    assert digest.startswith(DIGEST_PREFIX)
    for plain in (hashlib.sha256(SECRET.encode()).hexdigest(), hashlib.sha256(canonical.encode()).hexdigest()):
        assert plain not in digest
    # a guess list, hashed the old way, never meets the digest
    guesses = ["password", "123456", SECRET, "letmein"]
    old_style = {hashlib.sha256(json.dumps({"password": g, "size": "large"}, sort_keys=True,
                                           separators=(",", ":")).encode()).hexdigest() for g in guesses}
    assert digest.removeprefix(DIGEST_PREFIX) not in old_style


def test_a_short_key_is_refused() -> None:
    with pytest.raises(ValueError):
        _resolved().digest(b"short")


def test_the_key_is_made_once_per_root_with_mode_0600(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    runtime = Runtime(root)
    assert run_inputs.digest_key(runtime, create=False) is None
    assert not root.exists()  # a read-only comparison makes nothing

    key = run_inputs.digest_key(runtime)
    path = root / "config" / "digest.key"
    assert key is not None and len(key) == 32 and path.read_bytes() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert run_inputs.digest_key(Runtime(root)) == key == run_inputs.digest_key(Runtime(root), create=False)
    assert run_inputs.inputs_digest(Runtime(root), _resolved()) == _resolved().digest(key)
    assert sorted(p.name for p in path.parent.iterdir()) == ["digest.key"]  # no temp file left
    other = run_inputs.inputs_digest(Runtime(tmp_path / "other"), _resolved())
    assert other != run_inputs.inputs_digest(Runtime(root), _resolved())


def _make_key(root: str, barrier: Any, out: Any) -> None:
    barrier.wait()
    out.put(run_inputs.digest_key(Runtime(Path(root))))


def test_processes_racing_to_make_the_key_all_get_the_same_one(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    count = 6
    barrier, out = ctx.Barrier(count), ctx.Queue()
    procs = [ctx.Process(target=_make_key, args=(str(tmp_path / "rt"), barrier, out)) for _ in range(count)]
    for proc in procs:
        proc.start()
    keys = [out.get(timeout=30) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    assert len(set(keys)) == 1
    assert (tmp_path / "rt" / "config" / "digest.key").read_bytes() == keys[0]


def test_a_damaged_or_symlinked_key_is_refused_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    (root / "config").mkdir(parents=True)
    (root / "config" / "digest.key").write_bytes(b"short")
    with pytest.raises(RefusedError, match="damaged") as info:
        run_inputs.digest_key(Runtime(root))
    assert "\n" not in info.value.message

    (root / "config" / "digest.key").unlink()
    (root / "config" / "digest.key").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RefusedError, match="digest key"):
        run_inputs.digest_key(Runtime(root))
    assert not (tmp_path / "elsewhere").exists()

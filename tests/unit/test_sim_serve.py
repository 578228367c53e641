"""The sim provider's start: its TLS certificate is made once, cached with its expiry, and
a start that finds a good cache does not touch `cryptography`."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridops_tf.sim import serve

NOW = 1_800_000_000.0


def test_the_cache_lives_under_xdg_cache_home_or_the_home_cache_then_the_sim_root(tmp_path: Path) -> None:
    assert serve.cert_cache_paths({"XDG_CACHE_HOME": str(tmp_path)}) == [
        tmp_path / "hybridops-tf" / "sim-tls.json"
    ]
    assert serve.cert_cache_paths({"HYOPS_SIM_ROOT": str(tmp_path / "cloud")}) == [
        Path.home() / ".cache" / "hybridops-tf" / "sim-tls.json", tmp_path / "cloud" / "sim-tls.json"
    ]


def test_without_a_home_the_sim_root_keeps_the_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(serve.Path, "home", staticmethod(no_home))
    assert serve.cert_cache_paths({"HYOPS_SIM_ROOT": str(tmp_path)}) == [tmp_path / "sim-tls.json"]
    assert serve.cert_cache_paths({}) == []


def test_a_made_certificate_is_cached_private_and_reused_without_making_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache" / "sim-tls.json"
    first = serve.server_cert([path], NOW)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert first["cert_pem"].startswith("-----BEGIN CERTIFICATE-----")
    der = base64.b64decode(first["cert_der_b64"])
    pem_body = "".join(first["cert_pem"].strip().splitlines()[1:-1])
    assert base64.b64decode(pem_body) == der  # the handshake's DER is the PEM's certificate

    def no_second_cert(now: float) -> dict[str, object]:
        raise AssertionError("a good cache must not make a new certificate")

    monkeypatch.setattr(serve, "make_cert", no_second_cert)
    assert serve.server_cert([path], NOW + 3600) == first


def test_a_certificate_near_its_expiry_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "sim-tls.json"
    first = serve.server_cert([path], NOW)
    expiry = json.loads(path.read_text())["not_after"]
    assert expiry == pytest.approx(NOW + serve.CERT_VALID_SECONDS)
    assert serve.load_cached_cert(path, expiry - serve.CERT_RENEW_MARGIN - 1) is not None
    assert serve.load_cached_cert(path, expiry - serve.CERT_RENEW_MARGIN) is None
    renewed = serve.server_cert([path], expiry - 60)
    assert renewed["cert_der_b64"] != first["cert_der_b64"]
    assert json.loads(path.read_text())["not_after"] > expiry


@pytest.mark.parametrize(
    "content",
    ["", "{not json", "[]", json.dumps({"not_after": NOW + 10**6}), json.dumps({"not_after": "x"})],
    ids=["empty", "garbage", "not-a-mapping", "missing-keys", "bad-expiry"],
)
def test_an_unusable_cache_is_not_used(tmp_path: Path, content: str) -> None:
    path = tmp_path / "sim-tls.json"
    path.write_text(content)
    assert serve.load_cached_cert(path, NOW) is None
    assert serve.server_cert([path], NOW)["cert_pem"].startswith("-----BEGIN CERTIFICATE-----")
    assert serve.load_cached_cert(path, NOW) is not None


def test_an_unwritable_cache_still_gives_a_certificate(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cert = serve.server_cert([blocker / "hybridops-tf" / "sim-tls.json"], NOW)
    assert cert["key_pem"].startswith("-----BEGIN PRIVATE KEY-----")


def test_an_unwritable_first_cache_falls_back_to_the_next_and_the_next_start_reuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    paths = [blocker / "hybridops-tf" / "sim-tls.json", tmp_path / "cloud" / "sim-tls.json"]
    first = serve.server_cert(paths, NOW)
    assert stat.S_IMODE(paths[1].stat().st_mode) == 0o600

    def no_second_cert(now: float) -> dict[str, object]:
        raise AssertionError("the fallback cache must spare the next start its own certificate")

    monkeypatch.setattr(serve, "make_cert", no_second_cert)
    assert serve.server_cert(paths, NOW + 60) == first


def test_a_good_first_cache_is_used_before_the_fallback(tmp_path: Path) -> None:
    primary, fallback = tmp_path / "home" / "sim-tls.json", tmp_path / "cloud" / "sim-tls.json"
    made = serve.server_cert([primary], NOW)
    assert serve.server_cert([primary, fallback], NOW + 60) == made
    assert not fallback.exists()


def test_a_start_with_a_good_cache_does_not_import_cryptography(tmp_path: Path) -> None:
    serve.server_cert(serve.cert_cache_paths({"XDG_CACHE_HOME": str(tmp_path)}), time.time())
    probe = (
        "import sys, time; from hybridops_tf.sim import serve; "
        "serve.server_cert(serve.cert_cache_paths(), time.time()); "
        "print('cryptography' in sys.modules)"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"

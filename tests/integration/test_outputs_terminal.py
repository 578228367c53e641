"""`hyops outputs NAME --raw` after a real apply, and ASCII progress under LC_ALL=C."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.integration.hyops_cli import Hyops

C_LOCALE = {"LC_ALL": "C", "LANG": "", "LC_CTYPE": "", "PYTHONIOENCODING": ""}


def test_apply_progress_under_lc_all_c_is_ascii_and_outputs_raw_is_the_recorded_value(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    for name in ("network", "vm", "config"):
        module_copy(name)
    secret = "s3cr3t-Tok3n-4242"
    applied = hyops("apply", "modules/network", env=C_LOCALE)
    assert applied.returncode == 0, applied.stderr
    assert "sim_network.this" in applied.stderr  # progress was printed
    assert all(ord(ch) < 128 for ch in applied.stdout + applied.stderr)

    net = hyops("outputs", "modules/network", "network_id", "--raw")
    assert net.returncode == 0, net.stderr
    assert net.stdout == hyops.record("network")["outputs"]["network_id"] + "\n"
    assert hyops("apply", "modules/vm", "--var", f"network_id={net.stdout.strip()}").returncode == 0
    vm = hyops.record("vm")["outputs"]["vm_id"]
    assert hyops("apply", "modules/config", "--var", f"vm_id={vm}", "--var", f"api_token={secret}").returncode == 0

    sensitive = hyops("outputs", "modules/config", "api_token_echo", "--raw")
    assert sensitive.returncode == 2
    assert "tofu output" in sensitive.stderr
    assert secret not in sensitive.stdout + sensitive.stderr

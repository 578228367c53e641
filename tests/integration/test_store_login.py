"""A store URL without a password and no PGPASSWORD/PGPASSFILE: the server asks for one
(`fe_sendauth: no password supplied`), and the one line hyops prints names where the password
goes, on the private cluster (scram-sha-256 only: tests/pgcluster.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.hyops_cli import HYOPS
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


def test_a_login_without_a_password_names_pgpassword_and_pgpassfile(pg_store: SharedStore,
                                                                     tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(HYOPS_STORE=pg_store.url, HYOPS_RUNTIME_ROOT=str(tmp_path / "rt"),
               PGPASSFILE=str(tmp_path / "no-such-pgpass"))  # not the developer's ~/.pgpass

    out = subprocess.run([HYOPS, "status", "--all"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)

    assert out.returncode == 4, out.stdout + out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("hyops: error:")]
    assert len(errors) == 1, out.stderr
    assert "no password supplied" in errors[0]
    assert "PGPASSWORD" in errors[0] and "PGPASSFILE" in errors[0], errors[0]
    assert pg_store.cluster.password not in out.stdout + out.stderr

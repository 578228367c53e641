"""`hyops status DIR` finds the record that claims DIR (issue 55, item 5): a stack member's
record is filed under the stack's ref (`demo/network`), not the folder's path, and status of
the member's folder said "no record" while exactly one record claimed it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

TF = 'output "name" {\n  value = "x"\n}\n'


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    module = tmp_path / "modules" / "net"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(TF)
    return module


def test_status_of_a_folder_reads_the_one_record_that_claims_it(hyops: Hyops, folder: Path) -> None:
    assert hyops("apply", "modules/net", "--ref", "demo/network").returncode == 0

    out = hyops("status", "modules/net", "--json")

    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc is not None and doc["module_ref"] == "demo/network" and doc["status"] == "ok"
    assert "demo/network" in out.stderr  # it says which record it read


def test_status_of_a_folder_two_records_claim_names_the_ref_of_each(hyops: Hyops, folder: Path) -> None:
    assert hyops("apply", "modules/net", "--ref", "one/net").returncode == 0
    assert hyops("destroy", "modules/net", "--ref", "one/net").returncode == 0
    assert hyops("apply", "modules/net", "--ref", "two/net").returncode == 0

    out = hyops("status", "modules/net")

    assert out.returncode == 2, out.stdout + out.stderr
    assert "--ref one/net" in out.stderr and "--ref two/net" in out.stderr, out.stderr
    assert hyops("status", "modules/net", "--ref", "two/net").returncode == 0

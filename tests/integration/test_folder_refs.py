"""A module folder whose name is no ref (a space, an `é`) is refused naming the fix: its
message says ASCII letters where it means them and offers `--ref NAME`, and running with
that very option works (issue 55, item 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops

TF = 'output "name" {\n  value = "x"\n}\n'


@pytest.mark.parametrize("folder", ["my mod", "café"])
def test_a_folder_name_that_is_no_ref_is_refused_offering_a_ref_that_works(
        hyops: Hyops, tmp_path: Path, folder: str) -> None:
    module = tmp_path / "modules" / folder
    module.mkdir(parents=True)
    (module / "main.tf").write_text(TF)

    refused = hyops("apply", f"modules/{folder}")
    assert refused.returncode == 2, refused.stderr
    assert "ASCII letters" in refused.stderr, refused.stderr
    offered = re.search(r"--ref (\S+)", refused.stderr)
    assert offered is not None, refused.stderr

    out = hyops("apply", f"modules/{folder}", "--ref", offered.group(1))
    assert out.returncode == 0, out.stderr
    rec = hyops.record(offered.group(1))
    assert rec is not None and rec["status"] == "ok"

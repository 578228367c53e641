"""A failed plan and a failed init say the engine's own diagnostics and name the logs, in text
and in `--format markdown` (a pull-request job shows only stdout). Real engine."""

from __future__ import annotations

from pathlib import Path

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

UNDECLARED = SIM_HEADER + """
resource "sim_network" "net" {
  name = var.missing
}
"""


def _module(h: Hyops, text: str) -> Path:
    module = h.workdir / "modules" / "bad"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(text)
    return module


def test_a_failed_plan_prints_the_diagnostic_with_file_and_line_and_names_the_logs(hyops: Hyops) -> None:
    _module(hyops, UNDECLARED)
    line = next(i for i, text in enumerate(UNDECLARED.splitlines(), 1) if "var.missing" in text)

    text = hyops("plan", "modules/bad")
    markdown = hyops("plan", "modules/bad", "--format", "markdown")

    assert text.returncode == 1 and markdown.returncode == 1
    for out in (text.stderr, markdown.stdout):
        flat = " ".join(out.split())
        assert f"main.tf line {line}: Reference to undeclared input variable" in flat, out
        assert "events.jsonl" in flat and "engine.stderr.log" in flat
    assert markdown.stdout.startswith("### Plan: modules/bad")


def test_a_failed_init_prints_the_engine_error_and_names_init_log(hyops: Hyops) -> None:
    _module(hyops, 'terraform {\n  required_providers {\n    sim = { source = "hybridops.dev/hybridops/sim", '
                   'version = "99.0.0" }\n  }\n}\n')

    out = hyops("apply", "modules/bad")

    flat = " ".join(out.stderr.split())
    assert out.returncode == 2, out.stderr  # init changes no state: a refusal (docs/contract.md: Exit codes)
    assert "Error: Failed to query available provider packages:" in flat, out.stderr
    assert "init.log" in flat


def test_a_relative_var_file_missing_where_it_is_read_names_both_places(hyops: Hyops) -> None:
    """Before `--` a file is the current folder's; after it, the module's (as the engine
    reads it from -chdir). Put in the other place, the error says where it is."""
    module = _module(hyops, SIM_HEADER)
    (module / "in_module.tfvars").write_text("")
    (hyops.workdir / "at_top.tfvars").write_text("")

    before = hyops("plan", "modules/bad", "--var-file", "in_module.tfvars")
    after = hyops("plan", "modules/bad", "--", "-var-file=at_top.tfvars")

    assert before.returncode == after.returncode == 2
    assert f"{module / 'in_module.tfvars'} exists" in " ".join(before.stderr.split())
    assert "put -var-file=in_module.tfvars after `--`" in " ".join(before.stderr.split())
    assert f"{hyops.workdir / 'at_top.tfvars'} exists: pass it before `--`" in " ".join(after.stderr.split())

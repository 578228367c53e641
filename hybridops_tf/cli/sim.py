"""`hyops sim`: look inside the simulated cloud and set the engine up to reach it."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import click

from hybridops_tf.base.errors import UsageError
from hybridops_tf.cli.render import table
from hybridops_tf.cli.settings import commands, settings
from hybridops_tf.sim.cliconfig import CLI_CONFIG_ENV, CliConfigError
from hybridops_tf.sim.faults import FaultsError, FaultsFile, faults_path_from_env, load_faults
from hybridops_tf.sim.install import SIM_PYTHON_ENV, default_sim_root, engine_cli_config
from hybridops_tf.sim.store import SIM_ROOT_ENV, SimObject, SimStore, StoreError


def _sim_root(ctx: click.Context, sim_root: Path | None) -> Path:
    return sim_root if sim_root is not None else default_sim_root(settings(ctx).runtime.root)


def _load_faults(path: Path) -> FaultsFile:
    """The faults file, a relative path taken from the current directory (as hyops hands
    it to the engine); UsageError (exit 2, one line naming the absolute file) if unusable."""
    try:
        return load_faults(path)
    except FaultsError as err:
        raise UsageError(str(err)) from None


def _fired_counts(root: Path) -> dict[str, int]:
    try:
        return SimStore(root).fired_counts()
    except StoreError as err:
        raise UsageError(str(err)) from None


def _rule_line(faults: FaultsFile, index: int, counts: dict[str, int]) -> str:
    """`  rule 1 (sim_vm create fail_after_create) times=1: fired 1, spent until ...`"""
    rule = faults.rules[index]
    fired = counts.get(faults.counter_key(rule), 0)
    limit = "always" if rule.times is None else f"times={rule.times}"
    spent = rule.times is not None and fired >= rule.times
    note = ", spent until the file is written again (or touched)" if spent else ""
    return f"  {rule.describe()} {limit}: fired {fired}{note}"


def _visible_attributes(obj: SimObject) -> dict[str, object]:
    """Secrets' digests are the cloud's business, not the listing's."""
    return {k: v for k, v in obj.attributes.items() if not k.endswith("_sha256")}


def _object_json(obj: SimObject) -> dict[str, object]:
    return {
        "type": obj.type,
        "id": obj.id,
        "name": obj.name,
        "attributes": _visible_attributes(obj),
        "created_at": obj.created_at,
    }


@click.group("sim")
def sim_group() -> None:
    """The simulated cloud: list or delete its objects, check fault files, install the provider.

    \b
    Example:
      hyops sim install
      HYOPS_SIM_FAULTS=faults.yml hyops apply modules/sim/vm
      hyops sim ls
    """


_sim_root_option = click.option(
    "--sim-root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=SIM_ROOT_ENV,
    help="Sim cloud directory (env HYOPS_SIM_ROOT; default <runtime-root>/sim/cloud).",
)


@sim_group.command("ls")
@click.option(
    "--json", "as_json", is_flag=True, help='Print {"objects": [...]} sorted by type, name.'
)
@_sim_root_option
@click.pass_context
def ls_cmd(ctx: click.Context, as_json: bool, sim_root: Path | None) -> None:
    """List the live objects of the simulated cloud.

    \b
    Exit codes:
      0  listed (none is fine)
      2  the sim root or the faults file ($HYOPS_SIM_FAULTS) is unreadable

    \b
    Example:
      hyops sim ls --json
    """
    faults = faults_path_from_env()
    if faults is not None:
        _load_faults(faults)
    try:
        objects = SimStore(_sim_root(ctx, sim_root)).list_objects()
    except StoreError as err:
        raise UsageError(str(err)) from None
    if as_json:
        click.echo(json.dumps({"objects": [_object_json(o) for o in objects]}, indent=2))
        return
    if not objects:
        click.echo(f"no live objects in {_sim_root(ctx, sim_root)}")
        return
    rows = [("TYPE", "ID", "NAME", "ATTRIBUTES")]
    for obj in objects:
        attrs = _visible_attributes(obj)
        details = " ".join(f"{k}={v}" for k, v in sorted(attrs.items()) if v is not None)
        rows.append((obj.type, obj.id, obj.name, details))
    table(rows)


@sim_group.command("rm")
@click.argument("object_ids", nargs=-1, required=True, metavar="ID...")
@_sim_root_option
@click.pass_context
def rm_cmd(ctx: click.Context, object_ids: tuple[str, ...], sim_root: Path | None) -> None:
    """Delete objects of the simulated cloud by hand, as a provider's console would.

    No engine and no record is involved: the state and hyops's record do not learn of it
    (a refresh does). Reconcile advises it for a suspect orphan that is a second object at
    an address the state holds. A vm's configs go with it.

    \b
    Exit codes:
      0  deleted
      2  an ID is not a live object, or the sim root is unreadable (nothing deleted)

    \b
    Example:
      hyops sim rm vm-1a2b3c4d
    """
    store = SimStore(_sim_root(ctx, sim_root))
    try:
        missing = [i for i in object_ids if store.get(i) is None]
        if missing:
            raise UsageError(f"no live object {', '.join(missing)} in {store.root}: see `{commands(ctx).sim_ls()}`; "
                             "nothing was deleted")
        for object_id in object_ids:
            for gone in store.delete(object_id):
                click.echo(f"deleted {gone}")
    except StoreError as err:
        raise UsageError(str(err)) from None


@sim_group.command("lookup")
@_sim_root_option
@click.pass_context
def lookup_cmd(ctx: click.Context, sim_root: Path | None) -> None:
    """Answer one reconcile lookup for a sim type: the request on stdin, the candidates on stdout.

    What a lookups file runs for the simulated cloud's types: it reads one JSON request
    (`{"type": "sim_vm", "planned": {...}, ...}`) and prints `{"candidates": [...]}`, every
    live object of that type with its name and attributes, so the lookup is `complete`. In
    hyops.lookups.yml: `sim_vm: {command: [hyops, sim, lookup], match: [name], complete: true}`.

    \b
    Exit codes:
      0  answered (no candidate is an answer too)
      2  the request is not JSON or names no sim type, or the sim root is unreadable

    \b
    Example:
      echo '{"type": "sim_vm"}' | hyops sim lookup
    """
    from hybridops_tf.sim.lookup import LookupRequestError, answer

    try:
        request = json.loads(sys.stdin.read())
    except ValueError as err:
        raise UsageError(f"the lookup request on stdin is not JSON: {err}") from None
    try:
        doc = answer(request, SimStore(_sim_root(ctx, sim_root)))
    except LookupRequestError as err:
        raise UsageError(str(err)) from None
    except StoreError as err:
        raise UsageError(str(err)) from None
    click.echo(json.dumps(doc, sort_keys=True))


@sim_group.command("check-faults")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@_sim_root_option
@click.pass_context
def check_faults_cmd(ctx: click.Context, file: Path | None, sim_root: Path | None) -> None:
    """Validate a faults file (default: $HYOPS_SIM_FAULTS), list its rules and their firings.

    A relative FILE is taken from the current directory, as hyops hands it to the engine;
    the first line names the absolute file checked. `times` counts per run of the file (one
    write to the next) in the sim cloud: each rule shows how often it fired in this run.

    \b
    Exit codes:
      0  the file is usable
      2  it is not (one line naming the file and the problem)

    \b
    Example:
      hyops sim check-faults faults.yml
    """
    path = file if file is not None else faults_path_from_env()
    if path is None:
        raise UsageError("no faults file: pass FILE or set HYOPS_SIM_FAULTS")
    faults = _load_faults(path)
    root = _sim_root(ctx, sim_root)
    counts = _fired_counts(root)
    click.echo(f"{faults.path}: {len(faults.rules)} rule(s) OK")
    for index in range(len(faults.rules)):
        click.echo(_rule_line(faults, index, counts))
    if faults.rules:
        click.echo(f"  (firings counted in {SimStore(root).fired_file} since the file was written)")


@sim_group.command("install")
@click.pass_context
def install_cmd(ctx: click.Context) -> None:
    """Write the provider mirror and CLI config into the runtime root.

    hyops does this by itself for modules that use the sim provider; run it to use raw
    tofu/terraform on those modules with the lines it prints. With a TF_CLI_CONFIG_FILE of
    your own, the config printed is yours plus the sim mirror (a derived file, 0600).

    \b
    Exit codes:
      0  written
      1  the runtime root is not writable
      2  your TF_CLI_CONFIG_FILE cannot be combined with the mirror (one line: why, what to do)

    \b
    Example:
      eval "$(hyops sim install)" && terraform -chdir=modules/sim/network init
    """
    runtime_root: Path = settings(ctx).runtime.root
    try:
        config = engine_cli_config(runtime_root, os.environ)
    except CliConfigError as err:
        raise UsageError(str(err)) from None
    click.echo(f"export {CLI_CONFIG_ENV}={shlex.quote(str(config))}")
    click.echo(f"export {SIM_PYTHON_ENV}={shlex.quote(sys.executable)}")
    sim_root = os.environ.get(SIM_ROOT_ENV) or str(default_sim_root(runtime_root))
    click.echo(f"export {SIM_ROOT_ENV}={shlex.quote(sim_root)}")

"""The query source of a lookup (`source: query`): the engine lists the type itself.

Terraform 1.14 added `terraform query`: the `list` blocks of a root folder's `*.tfquery.hcl`
files run through the providers' list resources, and `query -json` streams `list_start`,
one `list_resource_found` per object (its `identity`, and with `include_resource = true` its
attributes as `resource_object`) and `list_complete`. For a type whose lookup says
`source: query`, reconcile asks that instead of a command:

- a scratch folder in the reconcile's run folder (under the runtime root, never the user's
  module folder) holds a link to each of the module's own files and folders (nothing copied,
  so no value of a tfvars file lands anywhere new), a copy of its lock file (the engine must
  never write through to the user's), none of its state or `*.tfquery.hcl`, and one
  `hyops.tfquery.hcl` of our own: `list "<type>" "hyops"`, its provider the type's implied
  local name (`sim` for `sim_vm`), `include_resource = true`;
- the module's engine runs `query -json` there, with the module's `.terraform` as its data
  folder (its providers as `init` installed them), its engine environment and the inputs a
  plan of it would get (the var file on stdin, as every engine command takes it: never on
  disk);
- each `list_resource_found` of our block is a candidate: its id the object's `id`
  attribute, else the identity's single value; its identity kept; its attributes those of the
  object's that the create's plan gives (`planned`, which never holds a sensitive one: an
  engine's listing may hold secrets in the clear, and a finding prints a candidate's attributes).

Then the judging is the one every lookup gets (judge.py). An engine before 1.14 (or OpenTofu),
or a provider with no list resource for the type, answers UNSUPPORTED: the finding says
exactly that, and nothing changes. What was asked and answered is kept beside the command
lookups' files: `lookup.N.tfquery.hcl`, `lookup.N.stdout`, `lookup.N.stderr.log`.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import EngineError, Interrupted
from hybridops_tf.engine import features, query_stream
from hybridops_tf.engine.binary import EngineInfo
from hybridops_tf.engine.query_stream import Complete, Found, Problem
from hybridops_tf.engine.runner import Engine
from hybridops_tf.reconcile.lookup.ask import Answer
from hybridops_tf.reconcile.lookup.protocol import MAX_CANDIDATES
from hybridops_tf.reconcile.lookup.spec import LookupSpec
from hybridops_tf.reconcile.verdict import Candidate
from hybridops_tf.runtime.run_folder import RunFolder

LIST_NAME = "hyops"  # the list block's name: `list.<type>.hyops` in the engine's messages
QUERY_FILE = "hyops.tfquery.hcl"
LOCK_FILE = ".terraform.lock.hcl"
DATA_DIR_ENV = "TF_DATA_DIR"
# Never linked into the scratch folder: the engine's own data, state files, the user's queries
_LEFT_OUT = (".terraform", "terraform.tfstate", "terraform.tfstate.backup", "terraform.tfstate.d",
             "errored.tfstate", ".terraform.tfstate.lock.info", LOCK_FILE)


class QueryError(ValueError):
    """The query did not list the type: one line saying why; `unsupported` when the engine or
    the provider cannot list it at all (not a failure of the listing)."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


def provider_name(type_name: str) -> str:
    """The provider local name a resource of `type_name` uses when it names none: the type's
    first word (`sim` for `sim_vm`, `aws` for `aws_instance`)."""
    return type_name.split("_", 1)[0]


def list_block(type_name: str) -> str:
    """The `.tfquery.hcl` text that lists every object of `type_name` (at most one more than
    an answer may hold, so a listing cut short is seen)."""
    return (f'list "{type_name}" "{LIST_NAME}" {{\n'
            f"  provider         = {provider_name(type_name)}\n"
            "  include_resource = true\n"
            f"  limit            = {MAX_CANDIDATES + 1}\n"
            "}\n")


def unsupported_engine(info: EngineInfo) -> str | None:
    """Why this engine cannot answer a query lookup; None when it can."""
    return features.QUERY.lacking(info, features.QUERY_ADDED)


def _candidate(found: Found, index: int) -> Candidate:
    identity = found.identity
    attributes = dict(found.resource_object or {})
    ident = attributes.pop("id", None)
    if not (isinstance(ident, str) and ident.strip()) and identity is not None and len(identity) == 1:
        ident = next(iter(identity.values()))
    if not isinstance(ident, str) or not ident.strip():
        shown = found.display_name or f"result {index + 1}"
        raise QueryError(f"the engine listed {shown!s} with no `id` attribute and no one-value identity, so it "
                         "cannot be named for an import")
    return Candidate(ident.strip(), attributes, dict(identity) if identity is not None else None)


def parse_stream(stdout: str, type_name: str) -> tuple[Candidate, ...]:
    """The candidates `query -json` listed for our block of `type_name` (pure); QueryError
    when the engine said it cannot list the type, reported an error, or never completed."""
    address = f"list.{type_name}.{LIST_NAME}"
    found: list[Candidate] = []
    complete = False
    errors: list[str] = []
    for message in query_stream.messages(stdout):
        if isinstance(message, Problem):
            if message.no_list_resource:
                raise QueryError(f"the provider has no list resource for type {type_name} "
                                 f"(the engine said: {message.detail or message.summary})", unsupported=True)
            errors.append(f"{message.summary}: {message.detail}" if message.detail else message.summary)
        elif isinstance(message, Found) and message.address == address:
            found.append(_candidate(message, len(found)))
        elif isinstance(message, Complete) and message.address == address:
            complete = True
    if errors:
        raise QueryError(f"the engine's query failed: {'; '.join(errors)[:300]}")
    if not complete:
        raise QueryError(f"the engine's query never said the listing of {address} completed")
    if len(found) > MAX_CANDIDATES:
        raise QueryError(f"the engine listed more than {MAX_CANDIDATES} objects of type {type_name}: too many to "
                         "judge (a lookup command of your own can filter by the planned attributes)")
    first: dict[str, Candidate] = {}
    for candidate in found:
        first.setdefault(candidate.id, candidate)  # one per id: the first listed
    return tuple(first.values())


def scratch_folder(module_dir: Path, at: Path, type_name: str) -> None:
    """The module's root as the engine will query it (see the module docstring)."""
    at.mkdir(mode=0o700)
    for entry in sorted(module_dir.iterdir()):
        if entry.name in _LEFT_OUT or entry.name.endswith((".tfquery.hcl", ".tfquery.json")):
            continue
        (at / entry.name).symlink_to(entry.absolute())
    lock = module_dir / LOCK_FILE
    if lock.is_file():
        shutil.copyfile(lock, at / LOCK_FILE)
    (at / QUERY_FILE).write_text(list_block(type_name), encoding="utf-8")


def data_dir(module_dir: Path, environ: Mapping[str, str]) -> Path:
    """The module's engine data folder: TF_DATA_DIR (relative to the module) or `.terraform`."""
    given = Path(environ.get(DATA_DIR_ENV) or ".terraform")
    return given if given.is_absolute() else module_dir.absolute() / given


@dataclass(frozen=True)
class QueryEngine:
    """The module's engine as a plan of it would run: its binary, environment and inputs."""

    info: EngineInfo
    env: Mapping[str, str]
    inputs: str | None  # the var file's text (secrets included): fed on stdin, never written


def ask_query(spec: LookupSpec, module_dir: Path, engine: QueryEngine, folder: RunFolder, index: int,
              planned: Mapping[str, Any]) -> Answer:
    """Ask the engine to list `spec.type`; never raises for the engine's own failures (they are
    the answer's `why`; `unsupported` when it cannot list the type at all)."""
    stem = f"lookup.{index}"
    started = time.monotonic()
    if (why := unsupported_engine(engine.info)) is not None:
        return Answer(None, why, unsupported=True)
    scratch = folder.path / f"{stem}.module"
    try:
        scratch_folder(module_dir, scratch, spec.type)
        folder.write_text(f"{stem}.tfquery.hcl", list_block(spec.type))
        env = {**engine.env, DATA_DIR_ENV: str(data_dir(module_dir, {**os.environ, **engine.env}))}
        captured = Engine(engine.info, scratch, env, inputs=engine.inputs).query(spec.timeout)
    except OSError as err:
        return Answer(None, f"its scratch folder could not be made: {err.strerror or err}",
                      time.monotonic() - started)
    except EngineError as err:
        return Answer(None, f"the engine could not be started: {err.__cause__ or err.message}",
                      time.monotonic() - started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    seconds = time.monotonic() - started
    folder.write_text(f"{stem}.stdout", captured.stdout)
    folder.write_text(f"{stem}.stderr.log", captured.stderr)
    if captured.interrupted is not None:
        raise Interrupted("interrupted while a lookup ran; nothing was changed")
    if captured.timed_out:
        return Answer(None, f"the engine's query did not answer within its timeout of {spec.timeout:g}s and was "
                      "killed", seconds)
    try:
        listed = parse_stream(captured.stdout, spec.type)
        return Answer(tuple(replace(c, attributes={k: v for k, v in c.attributes.items() if k in planned})
                            for c in listed), seconds=seconds)
    except QueryError as err:
        why = str(err)
        if captured.returncode != 0 and not err.unsupported and "failed" not in why:
            last = next((ln.strip() for ln in reversed(captured.stderr.splitlines()) if ln.strip()), "")
            why = f"the engine's query exited {captured.returncode}: {last[:200] or why}"
        return Answer(None, why, seconds, unsupported=err.unsupported)

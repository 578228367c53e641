"""The differential corpus (tests/corpus/): each fixture is a root module shaped like a public
one, with a `corpus.yml` saying how to run it. test_corpus.py runs it twice, in fresh copies,
once with the raw engine and once through `hyops`, and compares what each left.

corpus.yml (every key optional but `about`):

    about: one line saying what shape the fixture brings
    min_engine: "1.5"          # the engine release the language it uses needs (default "1.0")
    vars: {name: "text"}       # `-var name=text` raw, `--var name=text` through hyops
    var_files: [extra.tfvars]  # beside main.tf; `-var-file` raw, `--var-file` through hyops
    env: {TF_VAR_x: "..."}     # the same environment for both runs
    workspace: stg             # raw: `workspace new stg`; hyops: `--workspace stg`
    setup: {dir: setup, vars: {net_id: network_id}}
                               # applied first (raw engine, one cloud per leg); its outputs become
                               # `--var`s of both runs
    steps:                     # default: apply then destroy, both expected ok
      - {command: apply, args: ["-target=null_resource.a"], expect: ok}
      - {command: apply, overlay: v2}  # v2/'s files are copied over the module's first
      - {command: destroy, expect: error, refused: "why hyops exits 2 (docs/contract.md)"}
      - {command: apply, args: ["-target=x.y"], hyops: {exit: ok, record: error, documented: "where and why"}}
    xfail: {reason: "issue 43: ...", engines: [bundled, modern]}
    in_module: true            # both legs run from inside the module's folder (hyops: `hyops apply .`),
                               # as a user who runs the engine there does (path.cwd is that folder)

`expect` is the raw engine's exit class (ok: 0, error: anything else), checked so a fixture
cannot silently stop proving what it was written for. `refused` lists a documented hyops
refusal: the engine stopped before any change, hyops exits 2 and leaves the record as it was.
`hyops` lists another documented difference: the exit class and record status hyops gives
instead (a partial run is never `ok`, docs/running.md), with where the docs say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hybridops_tf.base import numbers
from hybridops_tf.engine.addresses import render_key
from hybridops_tf.engine.features import key_spelling_of
from hybridops_tf.record.address import record_key
from hybridops_tf.sim.install import sim_engine_env
from tests.integration.hyops_cli import Hyops

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SPEC_FILE = "corpus.yml"
ENGINE_TIMEOUT_SECONDS = 300
ENGINE_LEFTOVERS = (".terraform", "terraform.tfstate", "terraform.tfstate.backup", "terraform.tfstate.d",
                    ".terraform.lock.hcl")
MASK = "<id>"
GONE = ("destroyed",)  # record/lifecycle.py ResourceStatus: the entry of an object no longer live
SIM_ID = re.compile(r"\b(?:net|vm|cfg|hc)-[0-9a-f]{8}\b")  # sim.kinds: "<prefix>-<8 hex>"


@dataclass(frozen=True)
class Step:
    command: str  # apply | destroy
    args: tuple[str, ...] = ()
    expect: str = "ok"
    refused: str | None = None
    overlay: str | None = None  # a subfolder of the fixture whose files replace the module's first
    # a documented difference: what hyops exits and records instead, and where the docs say so
    hyops_exit: str | None = None
    hyops_record: str | None = None
    documented: str | None = None


@dataclass(frozen=True)
class Spec:
    name: str
    about: str
    min_engine: tuple[int, ...] = (1, 0)
    vars: dict[str, str] = field(default_factory=dict)
    var_files: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    workspace: str | None = None
    setup_dir: str | None = None
    setup_vars: dict[str, str] = field(default_factory=dict)
    steps: tuple[Step, ...] = (Step("apply"), Step("destroy"))
    xfail_reason: str | None = None
    xfail_engines: tuple[str, ...] = ("bundled", "modern")
    in_module: bool = False  # hyops runs from inside the module's folder, as the raw leg always does

    @property
    def folder(self) -> Path:
        return CORPUS / self.name


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", str(text))[:3])


def load_spec(folder: Path) -> Spec:
    doc = yaml.safe_load((folder / SPEC_FILE).read_text()) or {}
    steps = tuple(
        Step(s["command"], tuple(s.get("args", ())), s.get("expect", "ok"), s.get("refused"), s.get("overlay"),
             (s.get("hyops") or {}).get("exit"), (s.get("hyops") or {}).get("record"),
             (s.get("hyops") or {}).get("documented"))
        for s in doc.get("steps", ())
    ) or (Step("apply"), Step("destroy"))
    setup = doc.get("setup") or {}
    xfail = doc.get("xfail") or {}
    return Spec(
        name=folder.name,
        about=doc["about"],
        min_engine=_release(doc.get("min_engine", "1.0")),
        vars={k: str(v) for k, v in (doc.get("vars") or {}).items()},
        var_files=tuple(doc.get("var_files", ())),
        env={k: str(v) for k, v in (doc.get("env") or {}).items()},
        workspace=doc.get("workspace"),
        setup_dir=setup.get("dir"),
        setup_vars=dict(setup.get("vars") or {}),
        steps=steps,
        xfail_reason=xfail.get("reason"),
        xfail_engines=tuple(xfail.get("engines", ("bundled", "modern"))),
        in_module=bool(doc.get("in_module", False)),
    )


def all_specs() -> list[Spec]:
    return [load_spec(folder) for folder in sorted(CORPUS.iterdir()) if (folder / SPEC_FILE).is_file()]


def copy_fixture(spec: Spec, target: Path) -> Path:
    shutil.copytree(spec.folder, target, ignore=shutil.ignore_patterns(*ENGINE_LEFTOVERS))
    return target


def lay_overlay(module: Path, overlay: str) -> None:
    """Copy the files of `module/overlay/` over the module's own (a changed configuration)."""
    for source in sorted((module / overlay).iterdir()):
        if source.is_file():
            shutil.copyfile(source, module / source.name)


# ----- what a run left: the state, read as the engine wrote it -----
def _address(resource: dict[str, Any], instance: dict[str, Any], engine_version: str) -> str:
    """The address as the engine that wrote the state prints it: a string key quoted as that
    version quotes it (engine/addresses.py; each engine's own spelling is checked against its
    captured output in tests/unit/test_address_keys.py)."""
    prefix = f"{resource['module']}." if resource.get("module") else ""
    mode = "data." if resource.get("mode") == "data" else ""
    address = f"{prefix}{mode}{resource['type']}.{resource['name']}"
    if "index_key" in instance:
        address += render_key(instance["index_key"], key_spelling_of(engine_version))
    return address


def _ids(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {value["id"]} if isinstance(value.get("id"), str) and value["id"] else set()
        for item in value.values():
            found |= _ids(item)
        return found
    if isinstance(value, list):
        return set().union(*(_ids(item) for item in value)) if value else set()
    return set()


def _mask(value: Any, ids: set[str]) -> Any:
    """`value` with every id the state's objects hold, and every sim object id (one another
    state made, read through remote state or a var), replaced by MASK."""
    text = numbers.dumps(value, sort_keys=True)
    for object_id in sorted(ids, key=len, reverse=True):
        text = text.replace(object_id, MASK)
    return numbers.loads(SIM_ID.sub(MASK, text))


def state_file(module: Path, workspace: str | None) -> Path:
    if workspace and workspace != "default":
        return module / "terraform.tfstate.d" / workspace / "terraform.tfstate"
    return module / "terraform.tfstate"


def state_summary(module: Path, workspace: str | None) -> dict[str, Any]:
    """Every object the state holds (address, tainted, deposed) and its outputs (value and
    sensitivity), provider-chosen ids masked; the same shape for both legs."""
    path = state_file(module, workspace)
    doc = numbers.loads(path.read_text()) if path.is_file() else {}  # numbers digit for digit
    ids = _ids([i.get("attributes") for r in doc.get("resources", ()) for i in r.get("instances", ())])
    objects = []
    for resource in doc.get("resources", ()):
        for instance in resource.get("instances", ()):
            entry = _address(resource, instance, str(doc.get("terraform_version", "")))
            if instance.get("status") == "tainted":
                entry += " (tainted)"
            if instance.get("deposed"):
                entry += " (deposed)"
            objects.append(entry)
    outputs = {name: {"value": out.get("value"), "sensitive": bool(out.get("sensitive"))}
               for name, out in (doc.get("outputs") or {}).items()}
    return {"objects": sorted(objects), "outputs": _mask(outputs, ids)}


def state_outputs_raw(module: Path, workspace: str | None) -> dict[str, Any]:
    path = state_file(module, workspace)
    doc = numbers.loads(path.read_text()) if path.is_file() else {}  # numbers digit for digit
    return dict(doc.get("outputs") or {})


def state_addresses(module: Path, workspace: str | None) -> list[str]:
    path = state_file(module, workspace)
    doc = numbers.loads(path.read_text()) if path.is_file() else {}  # numbers digit for digit
    version = str(doc.get("terraform_version", ""))
    return sorted(_address(r, i, version) for r in doc.get("resources", ()) for i in r.get("instances", ())
                  if r.get("mode") != "data")


# ----- the two legs -----
def exit_class(code: int) -> str:
    return "ok" if code == 0 else "error"


def hyops_class(code: int) -> str:
    return {0: "ok", 1: "error", 2: "refused"}.get(code, f"exit {code}")


@dataclass
class RawLeg:
    """The raw engine in `module`, with the sim's and the null mirror's environment."""

    engine: str
    module: Path
    runtime_root: Path
    cloud: Path
    extra_env: dict[str, str]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.extra_env)
        env["HYOPS_SIM_ROOT"] = str(self.cloud)
        env.update(sim_engine_env(self.runtime_root, env))
        return env

    def run(self, *args: str, module: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.engine, *args], cwd=module or self.module, env=self.env(),
                              capture_output=True, text=True, timeout=ENGINE_TIMEOUT_SECONDS, check=False)


def raw_input_args(spec: Spec, module: Path, extra_vars: dict[str, str]) -> list[str]:
    args = [f"-var-file={module / name}" for name in spec.var_files]
    return args + [f"-var={k}={v}" for k, v in {**spec.vars, **extra_vars}.items()]


def hyops_input_args(spec: Spec, module: Path, extra_vars: dict[str, str]) -> list[str]:
    args: list[str] = []
    for name in spec.var_files:
        args += ["--var-file", str(module / name)]
    for key, value in {**spec.vars, **extra_vars}.items():
        args += ["--var", f"{key}={value}"]
    return args


def run_setup(spec: Spec, leg: RawLeg, module: Path) -> dict[str, str]:
    """Apply the fixture's setup module (raw engine, this leg's cloud); its outputs as --vars."""
    if spec.setup_dir is None:
        return {}
    setup = module / spec.setup_dir
    for args in (("init", "-input=false", "-no-color"), ("apply", "-auto-approve", "-input=false", "-no-color")):
        done = leg.run(*args, module=setup)
        assert done.returncode == 0, f"setup {args[0]} failed:\n{done.stdout}\n{done.stderr}"
    outputs = json.loads(leg.run("output", "-json", module=setup).stdout)
    return {var: str(outputs[out]["value"]) for var, out in spec.setup_vars.items()}


def record_view(hyops: Hyops, spec: Spec, *, through_status: bool) -> dict[str, Any] | None:
    """The record as `hyops status --json` prints it (after the last step), else as stored:
    `status --json` prints the stored document, and one hyops process less a step keeps the
    corpus cheap."""
    if not through_status:
        if hyops.store is not None:
            return hyops.record(record_key(spec.name, spec.workspace))
        path = hyops.record_path(record_key(spec.name, spec.workspace))
        return numbers.loads(path.read_text()) if path.exists() else None  # numbers digit for digit
    args = ["status", f"modules/{spec.name}", "--ref", spec.name, "--json"]
    if spec.workspace:
        args += ["--workspace", spec.workspace]
    done = hyops(*args)
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr
    try:
        doc = numbers.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def record_problems(step: Step, code: int, before: dict[str, Any] | None, after: dict[str, Any] | None,
                    module: Path, workspace: str | None) -> list[str]:
    """What the record says that the engine's run and state do not."""
    if step.refused is not None and code == 2:
        keys = ("status", "resources", "outputs")
        same = before is None and (after is None or after.get("status") == "absent") or (
            before is not None and after is not None and all(before.get(k) == after.get(k) for k in keys))
        return [] if same else [f"a refused {step.command} changed the record: {before} -> {after}"]
    if after is None:
        return [f"no record after {step.command} (hyops exit {code})"]
    problems = []
    if step.hyops_record is not None:
        want = step.hyops_record
    elif step.command == "apply":
        want = "ok" if code == 0 else "error"
    else:
        want = "destroyed" if code == 0 else "error"
    if after.get("status") != want:
        problems.append(f"record status {after.get('status')!r}, want {want!r} (hyops exit {code})")
    outputs = {name: ({"sensitive": True} if out.get("sensitive") else out.get("value"))
               for name, out in state_outputs_raw(module, workspace).items()}
    recorded = after.get("outputs") or {}
    # a failure keeps every output known before, merged with what the state holds now, never fewer
    # (docs/contract.md: the record's outputs); otherwise the record's outputs are the state's
    kept = {k: v for k, v in recorded.items() if k in outputs} if want == "error" else recorded
    if numbers.dumps(kept, sort_keys=True) != numbers.dumps(outputs, sort_keys=True):  # numbers by their text
        problems.append(f"record outputs {numbers.dumps(recorded, sort_keys=True)} != state outputs "
                        f"{numbers.dumps(outputs, sort_keys=True)}")
    live = set(state_addresses(module, workspace))
    entries = {address for address, entry in (after.get("resources") or {}).items()
               if entry.get("status") not in GONE and ".data." not in f".{address}"}
    if entries != live:
        problems.append(f"record resources {sorted(entries)} != state objects {sorted(live)}")
    if after.get("status") == "destroyed":
        left = sorted(a for a, entry in (after.get("resources") or {}).items() if entry.get("status") not in GONE)
        if left:
            problems.append(f"a destroyed record keeps entries not destroyed: {left}")
    return problems

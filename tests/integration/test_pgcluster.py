"""The private PostgreSQL cluster the store tests run against (tests/pgcluster.py).

These start real servers (Debian's PostgreSQL via initdb + pg_ctl), which is why they live in
tests/integration. They prove what the store tests rely on: a database per test reachable
through `url()` with the password only in `env()`, the server running as an unprivileged
user, no password in any URL, argv, environment or file, a server that can be stopped and
started again mid-test with its data, and nothing left running afterwards. They skip only
when the PostgreSQL binaries are missing (.ci/run installs them).
"""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import pgcluster
from tests.pgcluster import PgCluster, PgClusterError, available, fresh_database, pg_cluster_session

UNAVAILABLE = available()
pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgCluster]:
    yield from pg_cluster_session(tmp_path_factory)


def _client_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGPASSFILE"] = os.devnull  # no ~/.pgpass may stand in for the password
    return env | extra


def _psql(cluster: PgCluster, url: str, sql: str,
          env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(cluster.bindir / "psql"), "-X", "-w", "-A", "-t",
                           "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                          env=_client_env(env), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, check=False)


def _proc_status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def _all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _server_pids(cluster: PgCluster) -> list[int]:
    """The postmaster and its children (checkpointer, walwriter, backends...)."""
    postmaster = cluster.postmaster_pid()
    assert postmaster is not None, "the server should be running"
    children = []
    for pid in _all_pids():
        try:
            if _proc_status(pid).get("PPid", "").strip() == str(postmaster):
                children.append(pid)
        except OSError:
            continue
    return [postmaster, *children]


def _processes_using(path: Path) -> list[int]:
    """Processes whose working dir is under `path` or whose argv names it."""
    found = []
    for pid in _all_pids():
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cwd.startswith(str(path)) or str(path).encode() in argv:
            found.append(pid)
    return found


def _expected_server_uid() -> int:
    return pwd.getpwnam("postgres").pw_uid if os.geteuid() == 0 else os.getuid()


def test_a_fresh_database_answers_psql_through_its_url_with_the_password_from_env(
        cluster: PgCluster) -> None:
    url, env = fresh_database(cluster, "tests/answers psql[local]")
    result = _psql(cluster, url, "select 1, current_database()", env)
    assert result.returncode == 0, result.stderr
    one, name = result.stdout.strip().split("|")
    assert one == "1"
    assert url == cluster.url(name)
    assert env == {"PGPASSWORD": cluster.password}


def test_the_server_refuses_a_client_without_the_right_password(cluster: PgCluster) -> None:
    url, _ = fresh_database(cluster, "refuses")
    assert _psql(cluster, url, "select 1", {}).returncode != 0
    assert _psql(cluster, url, "select 1", {"PGPASSWORD": "not-it"}).returncode != 0


def test_each_fresh_database_is_new_and_can_be_dropped(cluster: PgCluster) -> None:
    url, env = fresh_database(cluster, "same hint")
    other_url, _ = fresh_database(cluster, "same hint")
    assert url != other_url
    assert _psql(cluster, url, "create table t (x int)", env).returncode == 0
    assert _psql(cluster, other_url, "select count(*) from t", env).returncode != 0
    name = other_url.rsplit("/", 1)[1]
    cluster.drop_database(name)
    assert cluster.psql(f"select count(*) from pg_database where datname = '{name}'") == "0\n"


def test_the_server_runs_as_an_unprivileged_user_who_owns_the_data_dir(
        cluster: PgCluster) -> None:
    uid = _expected_server_uid()
    if os.geteuid() == 0:
        assert uid != 0
    st = cluster.data_dir.stat()
    assert st.st_uid == uid
    assert st.st_mode & 0o777 == 0o700
    postmaster, *children = _server_pids(cluster)
    assert _proc_status(postmaster)["Uid"].split()[:2] == [str(uid), str(uid)]
    for pid in children:
        try:
            status = _proc_status(pid)
        except FileNotFoundError:  # a backend or worker that exited since it was listed
            continue
        assert status["Uid"].split()[:2] == [str(uid), str(uid)]


def test_the_password_is_in_no_url_argv_environment_or_file(cluster: PgCluster) -> None:
    secret = cluster.password.encode()
    url, _ = fresh_database(cluster, "no password")
    assert cluster.password not in url
    assert cluster.password not in cluster.url()
    assert cluster.password not in repr(cluster)
    for pid in _server_pids(cluster):
        assert secret not in _bytes_of(Path(f"/proc/{pid}/cmdline"))
        assert secret not in _bytes_of(Path(f"/proc/{pid}/environ"))
    leaked = [p for p in cluster.work_dir.rglob("*") if p.is_file() and secret in _bytes_of(p)]
    assert leaked == []


def _bytes_of(path: Path) -> bytes:
    """The file's bytes; b"" when it went away meanwhile (a backend that exited, a server
    temp file removed while the tree was walked): what is gone holds no password."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def test_a_stopped_server_starts_again_on_the_same_port_with_its_data(tmp_path: Path) -> None:
    cluster = PgCluster.start(tmp_path)
    try:
        url, env = fresh_database(cluster, "restart")
        assert _psql(cluster, url, "create table kept (x int); insert into kept values (7)",
                     env).returncode == 0
        port = cluster.port

        cluster.stop_server()
        assert cluster.postmaster_pid() is None
        assert _psql(cluster, url, "select 1", env).returncode != 0

        cluster.start_server()
        assert cluster.port == port
        result = _psql(cluster, url, "select x from kept", env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "7"
    finally:
        cluster.stop()


def test_ending_the_session_fixture_stops_the_server_and_leaves_no_process(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    session = pg_cluster_session(tmp_path_factory)
    cluster = next(session)
    url, env = fresh_database(cluster, "busy")
    assert _psql(cluster, url, "select 1", env).returncode == 0
    pids = _server_pids(cluster)
    assert len(pids) > 1
    assert _processes_using(cluster.data_dir)

    session.close()

    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists()
             and _proc_status(pid).get("State", "").split()[:1] != ["Z"]]
    assert alive == []
    assert _processes_using(cluster.data_dir) == []
    assert cluster.postmaster_pid() is None
    cluster.stop()  # a second stop is harmless


def test_a_port_taken_before_the_server_binds_it_is_replaced_by_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        picks = iter([taken])
        real_free_port = pgcluster._free_port
        monkeypatch.setattr(pgcluster, "_free_port", lambda: next(picks, None) or real_free_port())
        cluster = PgCluster.start(tmp_path)
        try:
            assert cluster.port != taken
            assert cluster.psql("select 1") == "1\n"
        finally:
            cluster.stop()


def test_bad_database_names_are_refused_before_any_command_runs(cluster: PgCluster) -> None:
    with pytest.raises(PgClusterError):
        cluster.create_database('x"; drop database postgres; --')

"""A private PostgreSQL cluster for the test suite: a real server, never a mock.

Why this shape:
- The server is Debian's PostgreSQL (15 preferred) started with its own `initdb` and `pg_ctl`
  in a temp dir, on a free loopback port, so tests never touch a system cluster and two test
  sessions on one machine never share a server.
- PostgreSQL refuses to run as root. When the tests run as root (here and in CI) the server
  binaries run as the existing `postgres` system user; the cluster's files live in a dir that
  user owns (mode 0700) whose parents it can traverse. pytest's own base temp
  (/tmp/pytest-of-root) is private to root and reset to 0700 by every new pytest session, so
  when `base_dir` is not traversable by that user the cluster lives in a fresh dir under the
  system temp dir instead, removed by `stop()`.
- The superuser `hyops_admin` has a random password and the server only accepts
  scram-sha-256, so the tests prove that the password travels through the environment
  (`env()` -> PGPASSWORD) and never through a URL or an argv. initdb reads it from a
  0600 file that is deleted as soon as initdb returns.
- Client work (createdb, dropdb, psql) uses the PostgreSQL binaries, not a Python driver,
  so this module works whether or not the `postgres` extra (psycopg) is installed.

Nothing here imports pytest except `pg_cluster_session`, the fixture body the suite's
conftest wires in.
"""

from __future__ import annotations

import atexit
import functools
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ADMIN_USER = "hyops_admin"
SERVER_OS_USER = "postgres"
HOST = "127.0.0.1"
DEBIAN_ROOT = Path("/usr/lib/postgresql")
PREFERRED_VERSION = "15"
NEEDED_BINARIES = ("initdb", "pg_ctl", "postgres", "psql", "createdb", "dropdb")
START_TIMEOUT_SECONDS = 60
STOP_TIMEOUT_SECONDS = 20
CLIENT_TIMEOUT_SECONDS = 60
PORT_ATTEMPTS = 5
# sun_path holds 108 bytes; the server appends "/.s.PGSQL.NNNNN" to the socket dir.
SOCKET_DIR_MAX = 90
DATABASE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PgClusterError(RuntimeError):
    """The private cluster could not be created, started, stopped or used."""


@dataclass(frozen=True)
class ServerUser:
    """The OS account the server binaries run as; `switch` when we must drop root."""

    uid: int
    gid: int
    name: str
    home: str
    switch: bool

    def spawn_kwargs(self) -> dict[str, Any]:
        if not self.switch:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def _version_key(path: Path) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in path.parent.name.split("."))
    except ValueError:
        return (-1,)


def _has_binaries(bindir: Path) -> bool:
    return all(os.access(bindir / name, os.X_OK) for name in NEEDED_BINARIES)


def _pg_config_bindir() -> Path | None:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        return None
    result = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True,
                            timeout=CLIENT_TIMEOUT_SECONDS, check=False)
    return Path(result.stdout.strip()) if result.returncode == 0 and result.stdout.strip() else None


@functools.lru_cache(maxsize=1)
def find_bindir() -> Path | None:
    """Debian's PostgreSQL 15 bin dir, else the highest version installed, else pg_config's."""
    candidates = [DEBIAN_ROOT / PREFERRED_VERSION / "bin"]
    candidates += sorted(DEBIAN_ROOT.glob("*/bin"), key=_version_key, reverse=True)
    from_pg_config = _pg_config_bindir()
    if from_pg_config is not None:
        candidates.append(from_pg_config)
    return next((c for c in candidates if _has_binaries(c)), None)


def server_user() -> ServerUser | None:
    """Who runs initdb/pg_ctl: `postgres` when we are root, else ourselves."""
    if os.geteuid() != 0:
        uid = os.getuid()
        try:
            entry = pwd.getpwuid(uid)
            name, home = entry.pw_name, entry.pw_dir
        except KeyError:
            name, home = str(uid), tempfile.gettempdir()
        return ServerUser(uid, os.getgid(), name, home, switch=False)
    try:
        entry = pwd.getpwnam(SERVER_OS_USER)
    except KeyError:
        return None
    return ServerUser(entry.pw_uid, entry.pw_gid, entry.pw_name, entry.pw_dir, switch=True)


def available() -> str | None:
    """None when a private cluster can start here, else why not (a skip reason)."""
    if find_bindir() is None:
        return ("PostgreSQL server binaries not found (looked in "
                f"{DEBIAN_ROOT}/{PREFERRED_VERSION}/bin, {DEBIAN_ROOT}/*/bin and "
                "`pg_config --bindir`); install the `postgresql` package (.ci/run does it)")
    if server_user() is None:
        return (f"running as root but there is no `{SERVER_OS_USER}` system user to run the "
                "server as (the `postgresql` package creates it)")
    return None


def _traversable(path: Path, user: ServerUser) -> bool:
    """Can `user` reach `path`: search permission on it and every parent (mode bits only)."""
    if not user.switch:
        return os.access(path, os.X_OK | os.W_OK)
    for part in (path, *path.parents):
        st = os.stat(part)
        if st.st_uid == user.uid:
            bit = stat.S_IXUSR
        elif st.st_gid == user.gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return False
    return True


def _make_work_dir(base_dir: Path, user: ServerUser) -> Path:
    """A fresh 0700 dir owned by the server user, under base_dir when it can reach it."""
    for parent in (base_dir, Path(tempfile.gettempdir()), Path("/tmp")):
        if not parent.is_dir() or len(str(parent)) > SOCKET_DIR_MAX - 20:
            continue
        if _traversable(parent, user):
            work = Path(tempfile.mkdtemp(prefix="hyops-pg-", dir=parent))
            if user.switch:
                os.chown(work, user.uid, user.gid)
            return work
    raise PgClusterError(f"no temp dir reachable by OS user {user.name!r} "
                         f"(tried {base_dir} and the system temp dir)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _pid_alive(pid: int) -> bool:
    """Running, not a zombie: a postmaster reparented to a PID 1 that does not reap stays a
    zombie after it exits."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return stat_line.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _without_pg_settings(env: dict[str, str]) -> dict[str, str]:
    """The caller's PG* variables (PGDATA, PGPORT, ...) must not steer our commands."""
    return {k: v for k, v in env.items() if not k.startswith("PG")}


@dataclass(eq=False)
class PgCluster:
    """One private server; create with `PgCluster.start(base_dir)`, end with `stop()`."""

    bindir: Path
    user: ServerUser
    work_dir: Path
    password: str = field(repr=False)
    port: int = 0
    remove_work_dir: bool = True

    @property
    def data_dir(self) -> Path:
        return self.work_dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.work_dir / "sock"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "server.log"

    @classmethod
    def start(cls, base_dir: str | os.PathLike[str]) -> PgCluster:
        """initdb a new cluster under base_dir (see module doc) and start it; raises
        PgClusterError with the reason (and the server log's tail) when it cannot."""
        reason = available()
        if reason is not None:
            raise PgClusterError(reason)
        bindir, user = find_bindir(), server_user()
        assert bindir is not None and user is not None
        base = Path(base_dir).resolve()
        work = _make_work_dir(base, user)
        cluster = cls(bindir=bindir, user=user, work_dir=work,
                      password=secrets.token_urlsafe(24), remove_work_dir=work.parent != base)
        _LIVE.add(cluster)
        try:
            cluster._initdb()
            cluster._start_on_free_port()
        except BaseException:
            cluster.stop()
            raise
        return cluster

    # --- what tests use -------------------------------------------------------------------

    def url(self, dbname: str = "postgres") -> str:
        """libpq URL of a database; never carries the password (see `env()`)."""
        return f"postgresql://{ADMIN_USER}@{HOST}:{self.port}/{dbname}"

    def env(self) -> dict[str, str]:
        """The environment a client needs on top of its own: the password, and only that."""
        return {"PGPASSWORD": self.password}

    def create_database(self, name: str) -> None:
        self._client("createdb", "--maintenance-db=postgres", "--", _checked_name(name))

    def drop_database(self, name: str) -> None:
        """Drop it even while clients are connected (they are disconnected)."""
        self._client("dropdb", "--if-exists", "--force", "--maintenance-db=postgres", "--",
                     _checked_name(name))

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Run SQL with psql (unaligned, tuples only, stop on error); returns stdout."""
        return self._client("psql", "-X", "-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-d", self.url(dbname), "-c", sql, connect=False)

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid, None when the server is not running."""
        try:
            first = (self.data_dir / "postmaster.pid").read_text(encoding="utf-8").split("\n")[0]
            pid = int(first)
        except (OSError, ValueError):
            return None
        return pid if _pid_alive(pid) else None

    def stop_server(self) -> None:
        """Stop the server, keep the cluster (data, port, password) for `start_server()`:
        fast shutdown, immediate if that takes more than 20 s, SIGKILL as the last resort."""
        pid = self.postmaster_pid()
        if pid is None:
            return
        for mode in ("fast", "immediate"):
            result = self._as_server(
                self._pg_ctl("stop", "-m", mode, "-w", "-t", str(STOP_TIMEOUT_SECONDS)),
                timeout=STOP_TIMEOUT_SECONDS + 10)
            if result.returncode == 0 or not _pid_alive(pid):
                return
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid)

    def start_server(self) -> None:
        """Start the stopped server again on the same port and data."""
        if self.postmaster_pid() is not None:
            return
        result = self._pg_ctl_start()
        if result.returncode != 0:
            raise PgClusterError(f"pg_ctl start on port {self.port} failed: "
                                 f"{self._failure_text(result)}")

    def stop(self) -> None:
        """Stop the server for good and remove its files when they live outside base_dir.
        Idempotent; also run at interpreter exit for clusters still live."""
        try:
            self.stop_server()
        finally:
            _LIVE.discard(self)
            if self.remove_work_dir:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    # --- internals ------------------------------------------------------------------------

    def _bin(self, name: str) -> str:
        return str(self.bindir / name)

    def _server_env(self) -> dict[str, str]:
        env = _without_pg_settings(dict(os.environ))
        env.update({"LC_ALL": "C", "HOME": self.user.home})
        return env

    def _as_server(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=self.work_dir, env=self._server_env(),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, check=False, **self.user.spawn_kwargs())

    def _client(self, program: str, *args: str, connect: bool = True) -> str:
        argv = [self._bin(program)]
        if connect:
            argv += ["-h", HOST, "-p", str(self.port), "-U", ADMIN_USER, "-w"]
        env = _without_pg_settings(dict(os.environ)) | self.env()
        result = subprocess.run([*argv, *args], env=env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True,
                                timeout=CLIENT_TIMEOUT_SECONDS, check=False)
        if result.returncode != 0:
            raise PgClusterError(f"{program} failed ({result.returncode}): "
                                 f"{_tail(result.stderr)}")
        return result.stdout

    def _initdb(self) -> None:
        self.data_dir.mkdir(mode=0o700)
        self.socket_dir.mkdir(mode=0o700)
        if self.user.switch:
            os.chown(self.data_dir, self.user.uid, self.user.gid)
            os.chown(self.socket_dir, self.user.uid, self.user.gid)
        pwfile = self.work_dir / "pwfile"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            if self.user.switch:
                os.fchown(fd, self.user.uid, self.user.gid)
            os.write(fd, (self.password + "\n").encode())
        finally:
            os.close(fd)
        try:
            result = self._as_server(
                [self._bin("initdb"), "-D", str(self.data_dir), "-U", ADMIN_USER,
                 f"--pwfile={pwfile}", "--auth-local=scram-sha-256",
                 "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"],
                timeout=300)
        finally:
            pwfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise PgClusterError(f"initdb failed ({result.returncode}): "
                                 f"{_tail(result.stderr + result.stdout)}")

    def _pg_ctl(self, *args: str) -> list[str]:
        return [self._bin("pg_ctl"), "-D", str(self.data_dir), *args]

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        options = (f"-c listen_addresses={HOST} -p {self.port} "
                   f"-k {shlex.quote(str(self.socket_dir))} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        argv = self._pg_ctl("-o", options, "-l", str(self.log_file), "-w",
                            "-t", str(START_TIMEOUT_SECONDS), "start")
        return self._as_server(argv, timeout=START_TIMEOUT_SECONDS + 10)

    def _start_on_free_port(self) -> None:
        """Pick a free port; if another process takes it before the server binds, retry."""
        for _ in range(PORT_ATTEMPTS):
            self.port = _free_port()
            result = self._pg_ctl_start()
            if result.returncode == 0:
                return
            self.stop_server()
            if _port_is_free(self.port):
                raise PgClusterError(f"pg_ctl start failed: {self._failure_text(result)}")
        raise PgClusterError(f"every port tried was taken ({PORT_ATTEMPTS} attempts)")

    def _failure_text(self, result: subprocess.CompletedProcess[str]) -> str:
        try:
            log = self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            log = ""
        return f"{_tail(result.stderr + result.stdout)}\nserver log ({self.log_file}):\n{_tail(log)}"


def _wait_gone(pid: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            raise PgClusterError(f"postmaster {pid} is still running after SIGKILL")
        time.sleep(0.05)


def _checked_name(name: str) -> str:
    if not DATABASE_NAME.fullmatch(name):
        raise PgClusterError(f"database name {name!r} must match {DATABASE_NAME.pattern}")
    return name


def database_name(name_hint: str) -> str:
    """A fresh, valid database name from any hint (e.g. a pytest node name)."""
    stem = re.sub(r"[^a-z0-9_]+", "_", name_hint.lower()).strip("_")[:48] or "db"
    if not stem[0].isalpha():
        stem = "t_" + stem
    return f"{stem[:48]}_{secrets.token_hex(4)}"


def fresh_database(cluster: PgCluster, name_hint: str) -> tuple[str, dict[str, str]]:
    """Create a new empty database; returns (url, env) for a client: the URL has no
    password, env carries it (PGPASSWORD)."""
    name = database_name(name_hint)
    cluster.create_database(name)
    return cluster.url(name), cluster.env()


def pg_cluster_session(tmp_path_factory: Any) -> Iterator[PgCluster]:
    """Body of a session-scoped fixture: one cluster for the whole run, stopped at the end
    even when tests fail. Skips (with the reason) only when the cluster cannot exist here,
    i.e. the PostgreSQL binaries are missing."""
    reason = available()
    if reason is not None:
        import pytest

        pytest.skip(reason)
    cluster = PgCluster.start(tmp_path_factory.mktemp("pgcluster"))
    try:
        yield cluster
    finally:
        cluster.stop()


_LIVE: set[PgCluster] = set()


@atexit.register
def _stop_live_clusters() -> None:
    """A test session that dies with an exception still stops its servers."""
    for cluster in list(_LIVE):
        try:
            cluster.stop()
        except (PgClusterError, OSError, subprocess.SubprocessError):
            pass

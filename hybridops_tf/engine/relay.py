"""The event relay: the engine's stdout to events.jsonl and to hyops, outliving hyops.

process.py starts it in its own session, BEFORE the engine, with a bare interpreter that
imports this module (compiled once, like any other) rather than compiling a script:

    python -I -S -c BOOT PACKAGE_ROOT PARENT_PID CONTROL_FD LOG_FD GRACE ERR_FD ERR_LOG_FD DIR_FD MARKER

stdin is the engine's stdout, stdout a pipe to hyops, LOG_FD events.jsonl open for append
(-1: no log). Once the engine is spawned, hyops writes its pid to CONTROL_FD, and keeps its
end of that pipe open until the relay has exited: an end of file on CONTROL_FD means hyops
is gone, however it died (the kernel closes a killed process's files), and it comes once.
(The relay comes first: if it cannot start, the engine is never started.) For each line the
relay appends the redacted line to events.jsonl (the raw line reaches the disk before
hyops parses it), then forwards the line as read to hyops.

When hyops dies (a broken pipe on forward, or the end of CONTROL_FD) the relay sends the
engine ONE SIGTERM, its graceful stop (a second interrupt makes Terraform exit at once),
stops forwarding and keeps draining the engine into events.jsonl until EOF: the stopping
engine is not killed by SIGPIPE and every line it wrote lands on disk. ERR_FD is a copy of
the read end of the engine's stderr, which hyops tees; only once hyops is gone does the
relay drain it, into ERR_LOG_FD (engine.stderr.log). Watchdog: if the engine's process
group is still there GRACE seconds after hyops went, the relay SIGKILLs it (the engine leads
its group; provider plugins sit in it). At EOF, when every line reached events.jsonl, the
relay creates MARKER (events.complete) in the run folder open on DIR_FD: events.jsonl then
holds the engine's whole stdout (run_folder.EarlierRun relies on it). Then it exits.

Protocol with hyops (in band): a line that starts with NOTICE_PREFIX is the relay's, not
the engine's (engines never write a NUL byte): `<prefix>log_error <errno> <message>` says
events.jsonl could not be written; the relay goes on forwarding without a log. Its exit
code is 0, or EXIT_LOG_ERROR when the log failed. Nothing raw is written anywhere: the log
gets exactly what hybridops_tf.base.redact.redact_event_line returns.

Start-up is kept minimal (no site, only built-in modules: not even `os`, whose import costs
a bare interpreter about a millisecond); the redactor is imported only for the first line
that mentions a sensitive value.
"""

# Start-up cost matters here (it competes with the engine's own): no `from __future__`
# (3.11 reads `X | None` as it is), the C `_signal` module rather than `signal`, whose
# enum wrappers cost a third of the relay's start (signal numbers are plain ints), and the C
# `posix` module rather than `os`, which a bare interpreter has not loaded: the same calls,
# without os.py and the modules it imports.
import _signal as signal
import _thread
import posix as os
import sys
import time

NOTICE_PREFIX = "\x00hyops-relay "
LOG_ERROR = "log_error"
EXIT_LOG_ERROR = 3
GRACE_SECONDS = 2.0
_GROUP_POLL_SECONDS = 0.02


def notice(kind: str, errno: int, message: str) -> bytes:
    """One in-band line from the relay to hyops."""
    text = " ".join(message.split())  # one line, whatever the OS said
    return f"{NOTICE_PREFIX}{kind} {errno} {text}\n".encode("utf-8", errors="replace")


def parse_notice(line: str) -> tuple[str, int, str] | None:
    """(kind, errno, message) when line is a relay notice, else None."""
    if not line.startswith(NOTICE_PREFIX):
        return None
    kind, _, rest = line[len(NOTICE_PREFIX):].partition(" ")
    number, _, message = rest.partition(" ")
    try:
        return kind, int(number), message
    except ValueError:
        return kind, 0, rest


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _redact(text: str) -> str:
    """The line as events.jsonl may hold it (see hybridops_tf.base.redact)."""
    if '"sensitive":true' not in text.replace(" ", ""):  # the redactor's own cheap test
        return text
    from hybridops_tf.base.redact import redact_event_line  # the package root is on sys.path (run())

    return redact_event_line(text)


class Relay:
    def __init__(self, parent: int, control_fd: int | None, log_fd: int | None, grace: float,
                 out_fd: int = 1, err_fd: int | None = None, err_log_fd: int | None = None,
                 dir_fd: int | None = None, marker: str = "") -> None:
        self.parent = parent
        self.dir_fd = dir_fd
        self.marker = marker
        self.control_fd = control_fd
        self.err_fd = err_fd
        self.err_log_fd = err_log_fd
        self._err_drain: object | None = None  # the thread draining stderr once hyops is gone
        self._engine: int | None = None  # pid and process group id of the engine
        self.log_fd = log_fd
        self.grace = grace
        self.out_fd = out_fd
        self.gone_at: float | None = None  # monotonic time hyops was seen gone
        self._gone_once = _thread.allocate_lock()  # taken by the first hyops_gone, never released
        self.log_failed = False
        self.eof = False  # the engine closed its stdout: its pid may be free, never signal it

    # --- hyops gone: drain on, arm the watchdog ---
    def hyops_gone(self) -> None:
        """Runs once, however often it is called: from the thread watching CONTROL_FD and from
        a forward that met a broken pipe, at once, or nested in a signal handler that runs
        inside another call (`if self.gone_at is None: self.gone_at = ...` let two callers
        through, and the engine got two SIGTERMs). The lock's acquire is one C call, which no
        handler and no other thread can interrupt: the first caller wins."""
        if not self._gone_once.acquire(False):
            return
        self.gone_at = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, self.grace)
        if not self.eof:
            self.stop_engine()
        if self.err_fd is not None:
            import threading

            drain = threading.Thread(target=self._drain_stderr, daemon=True)
            drain.start()
            self._err_drain = drain

    def _drain_stderr(self) -> None:
        """hyops no longer tees the engine's stderr: keep it flowing into its log."""
        err_fd, log_fd = self.err_fd, self.err_log_fd
        assert err_fd is not None
        while True:
            try:
                chunk = os.read(err_fd, 65536)
            except InterruptedError:
                continue
            except OSError:
                return
            if not chunk:
                return
            if log_fd is not None:
                try:
                    _write_all(log_fd, chunk)
                except OSError:
                    log_fd = None

    def on_alarm(self, signum: int = 0, frame: object = None) -> None:
        self.kill_engine_group()

    def engine(self) -> int | None:
        """The engine's pid as hyops sent it (None: hyops died before it could)."""
        if self._engine is None and self.gone_at is not None:
            self._engine = _writer_of_stdin()  # hyops died before it could tell us
        return self._engine

    def watch_hyops(self) -> None:
        """In a thread of its own: the engine's pid from CONTROL_FD, then its end of file,
        which says hyops is gone (hyops holds the pipe's only other end until we exit)."""
        fd = self.control_fd
        assert fd is not None
        data = b""
        while True:
            try:
                chunk = os.read(fd, 64)
            except InterruptedError:
                continue
            except OSError:
                break
            if not chunk:
                break
            data += chunk
            if self._engine is None and data.endswith(b"\n"):
                self._engine = _pid(data)
        self.hyops_gone()

    def stop_engine(self) -> None:
        """One SIGTERM to the engine itself (not its group: Terraform's wrapper process
        passes it on to the real engine, which would otherwise get it twice)."""
        engine = self.engine()
        if engine is None:
            return
        try:
            os.kill(engine, signal.SIGTERM)
        except OSError:
            pass

    def kill_engine_group(self) -> None:
        engine = self.engine()
        if engine is None:
            return
        try:
            os.killpg(engine, signal.SIGKILL)
        except OSError:
            pass  # already gone

    def install(self) -> None:
        signal.signal(signal.SIGALRM, self.on_alarm)
        if self.control_fd is not None:
            _thread.start_new_thread(self.watch_hyops, ())
        elif os.getppid() != self.parent:  # no pipe to tell us: hyops died before we started
            self.hyops_gone()

    # --- per line ---
    def line(self, raw: bytes) -> None:
        if self.log_fd is not None:
            text = _redact(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
            try:
                _write_all(self.log_fd, text.encode("utf-8") + b"\n")
            except OSError as err:
                self.log_fd = None  # never stop the engine over our own log
                self.log_failed = True
                self.forward(notice(LOG_ERROR, err.errno or 0, err.strerror or str(err)))
        self.forward(raw)

    def forward(self, data: bytes) -> None:
        if self.gone_at is not None:
            return
        try:
            _write_all(self.out_fd, data)
        except OSError:  # broken pipe: hyops is gone
            self.hyops_gone()

    # --- end of the engine's stdout ---
    def finish(self) -> int:
        if self.gone_at is not None:
            deadline = self.gone_at + self.grace
            while self._group_alive():
                if time.monotonic() >= deadline:
                    self.kill_engine_group()
                    break
                time.sleep(_GROUP_POLL_SECONDS)
            signal.setitimer(signal.ITIMER_REAL, 0)
            drain = self._err_drain
            if drain is not None:  # the stderr pipe ends with the group
                drain.join(max(0.0, deadline + 0.5 - time.monotonic()))  # type: ignore[attr-defined]
        if not self.log_failed and self.log_fd is not None:
            self._mark_complete()
        return EXIT_LOG_ERROR if self.log_failed else 0

    def _mark_complete(self) -> None:
        """events.jsonl holds all the engine wrote: say so, once that is on disk (the marker
        itself durably only when hyops is gone: a lost marker only under-proves)."""
        if self.log_fd is None:
            return
        try:
            os.fsync(self.log_fd)
        except OSError as err:
            self.log_failed = True
            self.forward(notice(LOG_ERROR, err.errno or 0, err.strerror or str(err)))
            return
        if self.dir_fd is None or not self.marker:
            return
        try:
            fd = os.open(self.marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600,
                         dir_fd=self.dir_fd)
            try:
                _write_all(fd, b'{"schema_version": 1, "eof": true}\n')
                if self.gone_at is not None:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if self.gone_at is not None:
                os.fsync(self.dir_fd)
        except OSError:
            pass  # without the marker the run's events are only not proven complete

    def _group_alive(self) -> bool:
        engine = self.engine()
        if engine is None:
            return False
        try:
            os.killpg(engine, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True


def _writer_of_stdin() -> int | None:
    """The session leader whose stdout is our stdin: the engine, found through /proc."""
    try:
        ours = os.readlink("/proc/self/fd/0")
        names = os.listdir("/proc")
    except OSError:
        return None
    me = os.getpid()
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            if os.readlink(f"/proc/{pid}/fd/1") == ours and os.getsid(pid) == pid:
                return pid
        except OSError:
            continue
    return None


def _pid(data: bytes) -> int | None:
    """The engine's pid as hyops wrote it ("PID\\n"), or None."""
    try:
        pid = int(data.decode("ascii").strip())
    except ValueError:
        return None
    return pid if pid > 1 else None


def _fd(number: int) -> int | None:
    return number if number >= 0 else None


def main(argv: list[str]) -> int:
    parent, control_fd, log_fd, grace = int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
    err_fd, err_log_fd = (int(argv[5]), int(argv[6])) if len(argv) > 6 else (-1, -1)
    dir_fd, marker = (int(argv[7]), argv[8]) if len(argv) > 8 else (-1, "")
    relay = Relay(parent, _fd(control_fd), _fd(log_fd), grace, err_fd=_fd(err_fd), err_log_fd=_fd(err_log_fd),
                  dir_fd=_fd(dir_fd), marker=marker)
    relay.install()
    for raw in sys.stdin.buffer:  # a signal interrupts the read, runs its handler, reads on
        relay.line(raw)
    relay.eof = True
    return relay.finish()


def run() -> None:
    """The relay process's entry (process.py's boot code imports this module and calls it):
    sys.argv is `-c PACKAGE_ROOT PARENT_PID ...`, the package root already on sys.path."""
    os._exit(main(sys.argv[1:]))  # every write went through os.write: no interpreter teardown to wait for

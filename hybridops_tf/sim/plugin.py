"""The provider process: what `python -m hybridops_tf.sim` runs once the engine launched it.

Serve the provider (serve.py) until go-plugin's Shutdown, die with the engine that started
it, and leave at once when served: the process's life, apart from what the provider answers
(provider.py, servicer.py).
"""

from __future__ import annotations

from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.provider import SimProvider

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _exit_with_engine(poll_seconds: float = 1.0) -> None:
    """End the plugin when the engine that launched it is gone.

    A healthy engine stops its plugins; an engine killed outright (SIGKILL, SIGPIPE) cannot,
    and a plugin parked in a `hang` fault would otherwise live on, one per such kill, and
    could still create after its engine (and the hyops watching it) died. On Linux the
    kernel kills us with the engine (parent-death signal); a poll of our parent backs it up
    where prctl is not available.
    """
    import os
    import signal
    import threading
    import time

    parent = os.getppid()
    _kill_me_with_parent()
    if os.getppid() != parent:  # the engine died between our getppid and prctl
        os.kill(os.getpid(), signal.SIGKILL)

    def watch() -> None:
        while True:
            time.sleep(poll_seconds)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="sim-engine-watchdog", daemon=True).start()


def _kill_me_with_parent() -> bool:
    """Ask Linux for SIGKILL when our parent (the engine) dies; False where unsupported."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import signal

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        prctl.restype = ctypes.c_int
        return prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _leave_now() -> None:
    """Exit at once, without waiting for the gRPC worker threads.

    serve returns when go-plugin shut the plugin down: the engine is done with it, or gave up
    waiting (a second interrupt) while a call was still running. A call still parked in a
    `hang` fault then must not wake up later and create an object nobody will ever record.
    """
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def main() -> None:
    """Serve the provider over go-plugin's gRPC handshake (what the engine launches)."""
    from hybridops_tf.sim.serve import serve

    lifecycle = PluginLifecycle()
    _exit_with_engine()
    serve(SimProvider(lifecycle), lifecycle)
    _leave_now()

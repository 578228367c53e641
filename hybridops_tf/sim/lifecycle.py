"""What go-plugin has asked of this provider process: to stop, then to leave.

A Go provider (go-plugin, terraform-plugin-go / SDKv2) ignores SIGINT: a terminal's Ctrl-C
reaches the whole process group, and the engine decides how to stop. On an interrupt the
engine sends StopProvider: the provider answers, takes no new resource work, and the calls
already running return (a Go SDK cancels their request context; a call waiting on it gives
up, one that does not look at it runs to its end). The process leaves only on go-plugin's
Shutdown (GRPCController/Shutdown, sent when the engine is done with the plugin) or when its
engine is gone.

Kept free of grpc and the protocol: the cloud's `hang` fault reads `stopping` to decide whether a hung call
gives up (see faults.OnStop), and unit tests drive it in-process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class PluginLifecycle:
    """`stopping`: StopProvider arrived. `leaving`: Shutdown arrived (the process exits).

    Callbacks added with on_stop run once, in the thread that answers StopProvider; one that
    raises does not keep the others or the answer from happening.
    """

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.leaving = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def on_stop(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._callbacks.append(callback)

    def request_stop(self) -> None:
        """StopProvider: remember it; the first request runs the on_stop callbacks."""
        with self._lock:
            first = not self.stopping.is_set()
            self.stopping.set()
            callbacks = list(self._callbacks) if first else []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                pass  # a note about the stop must never fail the stop

    def request_shutdown(self) -> None:
        """go-plugin Shutdown: the process is to leave now."""
        self.leaving.set()

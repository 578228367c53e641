"""The tf Provider for `hybridops.dev/hybridops/sim` and its process entry point.

The engine starts this process (through the mirror's launcher), configures it once and
then calls it from up to 10 threads. Configuration errors (HYOPS_SIM_ROOT unset, a bad
faults file) are kept and reported as a diagnostic on configure and on every later call,
so the engine prints one clear message instead of a Python traceback.
"""

from __future__ import annotations

import threading
from typing import Any

from tf.iface import DataSource, Provider, Resource
from tf.schema import Schema
from tf.utils import Diagnostics

from hybridops_tf.sim.cliconfig import SIM_SOURCE
from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.faults import FaultsError
from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.resources import RESOURCES
from hybridops_tf.sim.store import SimRootError, StoreError


class SimProvider(Provider):
    """Provider `sim`: no provider-level arguments; everything comes from the environment."""

    def __init__(self, lifecycle: PluginLifecycle | None = None) -> None:
        self._cloud: SimCloud | None = None
        self._problem: str | None = None
        self._lock = threading.Lock()
        self.lifecycle = lifecycle or PluginLifecycle()
        self.lifecycle.on_stop(self._note_stop)

    def get_model_prefix(self) -> str:
        return "sim_"

    def full_name(self) -> str:
        return SIM_SOURCE

    def get_provider_schema(self, diags: Diagnostics) -> Schema:
        return Schema(version=0, attributes=[])

    def validate_config(self, diags: Diagnostics, config: dict[str, Any]) -> None:
        """Nothing to validate: the provider block takes no arguments."""

    def configure_provider(self, diags: Diagnostics, config: dict[str, Any]) -> None:
        self.cloud(diags)

    def get_data_sources(self) -> list[type[DataSource]]:
        return []

    def get_resources(self) -> list[type[Resource]]:
        return list(RESOURCES)

    def cloud(self, diags: Diagnostics) -> SimCloud | None:
        """The configured cloud, loading it from the environment once; None + error if unusable."""
        with self._lock:
            if self._cloud is None and self._problem is None:
                try:
                    self._cloud = SimCloud.from_env()
                    self._cloud.stopping = self.lifecycle.stopping
                    self._cloud.leaving = self.lifecycle.leaving
                except (SimRootError, FaultsError, StoreError) as exc:
                    self._problem = str(exc)
            if self._cloud is None:
                diags.add_error(
                    f"sim provider is not usable: {self._problem}",
                    "Check HYOPS_SIM_ROOT and HYOPS_SIM_FAULTS; "
                    "`hyops sim check-faults FILE` validates a faults file.",
                )
            return self._cloud

    def _note_stop(self) -> None:
        """StopProvider arrived: say so in calls.jsonl (op `stop`), where a test or a person
        can see that the engine asked, when, and which provider process it asked."""
        with self._lock:
            cloud = self._cloud
        if cloud is not None:  # an unconfigured provider has nowhere to write (and no work)
            cloud.note_stop()


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

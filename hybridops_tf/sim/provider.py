"""The provider `hybridops.dev/hybridops/sim` and its process entry point.

The engine starts this process (through the mirror's launcher), configures it once and
then calls it from up to 10 threads (servicer.py answers the protocol's calls). Configuration
errors (HYOPS_SIM_ROOT unset, a bad faults file) are kept and reported as a diagnostic on
configure and on every later call, so the engine prints one clear message instead of a Python
traceback.
"""

from __future__ import annotations

import threading

from hybridops_tf.sim.cloud import SimCloud
from hybridops_tf.sim.faults import FaultsError
from hybridops_tf.sim.lifecycle import PluginLifecycle
from hybridops_tf.sim.resources import RESOURCES, SimResource
from hybridops_tf.sim.store import SimRootError, StoreError
from hybridops_tf.sim.wire import Diagnostics


class SimProvider:
    """Provider `sim`: no provider-level arguments; everything comes from the environment."""

    def __init__(self, lifecycle: PluginLifecycle | None = None) -> None:
        self._cloud: SimCloud | None = None
        self._problem: str | None = None
        self._lock = threading.Lock()
        self.lifecycle = lifecycle or PluginLifecycle()
        self.lifecycle.on_stop(self._note_stop)

    def resource(self, type_name: str) -> SimResource | None:
        """The resource type `type_name` serves, bound to this provider; None for no such type."""
        cls = RESOURCES.get(type_name)
        return cls(self) if cls is not None else None

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

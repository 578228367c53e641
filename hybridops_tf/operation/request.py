"""What one apply/destroy/refresh/import of one module is asked, and what it answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base import notices
from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.actions import ActionRow
from hybridops_tf.record.address import ModuleTarget, record_key
from hybridops_tf.record.lifecycle import Command, Status
from hybridops_tf.record.model import OperationRecord

if TYPE_CHECKING:  # the event parser is loaded once the engine runs; see StreamReader
    from hybridops_tf.engine.events import Event
    from hybridops_tf.inputs.values import CliInput
    from hybridops_tf.runtime.root import Runtime


EventSink = Callable[["Event"], None]


@dataclass
class ModuleRequest:
    """Everything one apply/destroy of one module needs; built by the CLI or the stack runner."""

    command: Command  # apply | destroy | refresh | import; a plain string is taken as its Command
    target: ModuleTarget
    runtime: Runtime  # the runtime root and its store, built once by the caller
    inputs_file: Path | None = None
    var_options: Sequence[str | CliInput] = ()  # --var texts, or the command line's inputs in order
    stack_inputs: Mapping[str, Any] | None = None
    sensitive_inputs: frozenset[str] = frozenset()  # e.g. wired from a sensitive upstream output
    passthrough: Sequence[str] = ()
    lock_timeout: float = 0
    allow_uncertain: bool = False
    argv: Sequence[str] = ()
    workspace: str | None = None
    on_event: EventSink | None = None
    on_stderr: Callable[[str], None] | None = notices.engine_stderr
    run_id: str | None = None
    import_address: str | None = None  # command "import": adopt this object into state
    import_id: str | None = None
    empty_status: Status = Status.DESTROYED  # command "refresh": what a confirmed-empty state means
    expect_empty: bool = True  # command "refresh": False = just bring state and outputs up to date
    plan_file: Path | None = None  # apply/destroy exactly this saved plan (planning.saved_plan_request)
    # The saved plan's action invocations (record/action_fold.py planned_in): rows from the plan
    # on, since applying a saved plan prints none of them.
    planned_actions: Sequence[ActionRow] = ()

    def __post_init__(self) -> None:
        self.command = Command(self.command)

    @property
    def key(self) -> str:
        """The record key: the ref, plus `@workspace` outside the default workspace."""
        return record_key(self.target.ref, self.workspace)


@dataclass
class Outcome:
    record: OperationRecord | None
    exit_code: int
    run_id: str
    run_dir: Path | None
    message: str
    unchanged: bool = False  # the engine changed nothing (refused, or stopped first): the record is as it was

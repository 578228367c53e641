"""`stack apply --resume`: whether something other than hyops may have changed an `ok` member's
objects since its apply, and what a skip compared to say it did not (docs/stacks.md: Resume).

record/applied.py says whether what the member is applied from changed. This says whether its
objects did, from what can be read without the engine:
- its state, against the record's stamp (runtime/state_look.py, the decision `hyops status`
  makes): a serial that moved or another lineage means another writer (a raw apply, a
  `state rm`), and the member is applied;
- its live objects, as the last reconcile saw them (runtime/drift_seen.py): an object deleted
  or changed in the cloud's console leaves the state as it was, only a refresh sees it, and a
  drift reconcile saw since the record's run means the member is applied.
What was not compared is said in the skip's line and the run report, never left out: a skip
vouches only for what it compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime import drift_seen
from hybridops_tf.runtime.state_look import NOT_LOCAL, look
from hybridops_tf.stack.model import Member
from hybridops_tf.store import Documents

APPLIED_FROM = "its configuration, inputs, engine, workspace"
LIVE_NOT_COMPARED = "its live objects (reading them takes the engine; drift that reconcile --stack sees stops a skip)"
STATE_NOT_LOCAL = "its state (not a local file: reading it takes the engine; reconcile --stack compares it)"


@dataclass(frozen=True, slots=True)
class OutsideCheck:
    """`changed`: why the member is applied, never skipped (None: nothing seen); `compared`
    and `not_compared`: what a skip vouches for and what it does not, in words."""

    changed: str | None
    compared: tuple[str, ...] = ()
    not_compared: tuple[str, ...] = ()

    def skip_note(self) -> str:
        """What the skip compared, as its live line and the run report say it."""
        text = f"compared {', '.join((APPLIED_FROM, *self.compared))}"
        if self.not_compared:
            text += f"; not compared: {'; '.join(self.not_compared)}"
        return text


def outside(member: Member, rec: OperationRecord, store: Documents) -> OutsideCheck:
    """What may have changed `member`'s objects outside hyops since `rec` (an `ok` record)."""
    state = look(rec, member.directory, member.workspace)
    if state.written is not None:
        return OutsideCheck(f"{state.written.headline()}: the apply's plan shows what it undoes")
    compared: list[str] = []
    not_compared: list[str] = []
    if state.now is not None and rec.state_seen is not None:
        compared.append(f"state serial {state.now.serial} as run {rec.state_seen.run_id} left it")
    elif state.not_looked == NOT_LOCAL:
        not_compared.append(STATE_NOT_LOCAL)
    else:
        not_compared.append(f"its state ({state.not_looked})")
    try:
        seen = drift_seen.read(store, member.key)
    except drift_seen.DriftSeenUnreadable as err:  # not known is not "no drift"
        return OutsideCheck(f"what reconcile saw of its live objects cannot be read ({err}): applied, not trusted")
    if seen is not None and seen.about(rec):
        if seen.drift:
            return OutsideCheck(f"{seen.describe()}: the apply puts them back as configured")
        compared.append(f"its live objects as reconcile saw them at {seen.seen_at} (no drift)")
    else:
        not_compared.append(LIVE_NOT_COMPARED)
    return OutsideCheck(None, tuple(compared), tuple(not_compared))

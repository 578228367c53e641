"""What one command costs the shared store in connections and statements (issue 37): one
connection, whatever the command, and a fixed number of statements (each one round trip),
so the store's share of a command stays flat however far the server is.

Counted on the server, not timed: the test's database logs every statement
(`log_statement = all`, set on that database only), each log line names the backend's pid
(one pid per connection), and the server writes a statement's line before it runs it, so
by the time `hyops` exits every statement it made is in the log.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

NOOP_TF = 'output "answer" {\n  value = 42\n}\n'
ARGS = ("modules/noop", "--ref", "bench/noop")
# Statements per command on a module already applied, without the journal's engine lines
# (written by a thread while the engine runs, so they add nothing to the command's wait).
# apply: schema check, lock, read, meta, digest key, running, rerun inputs, settled, result,
# unlock. plan: the record, the recorded inputs it reuses (rerun.inputs.yml, as destroy does).
# reconcile: also the drift it last saw (drift_seen, read so a quiet module's clears it: issue 44).
# apply and reconcile: also the objects reconcile saw another writer make (outside_seen, read once:
# an apply never makes a second one of an object a rollback took out of the state, issue 54).
BUDGET = {"apply": 11, "plan": 3, "status": 3, "reconcile": 11}
_STATEMENT = re.compile(r"\[(\d+)\].*LOG:  (?:statement|execute [^:]*): (.*)")
_JOURNAL_LINE = "INSERT INTO hyops.journal (key, run_id, kind, body) VALUES"


def statements(log: Path, since: int) -> list[tuple[str, str]]:
    """(backend pid, SQL) of every statement logged after byte `since`."""
    text = log.read_bytes()[since:].decode("utf-8", errors="replace")
    return [(m[1], m[2]) for m in map(_STATEMENT.search, text.splitlines()) if m]


@pytest.mark.parametrize("command", list(BUDGET))
def test_a_command_on_the_shared_store_uses_one_connection_and_a_fixed_number_of_statements(
    hyops_pg: Hyops, pg_store: SharedStore, command: str,
) -> None:
    module = hyops_pg.workdir / "modules" / "noop"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(NOOP_TF)
    assert hyops_pg("apply", *ARGS).returncode == 0  # init and the first record
    pg_store.sql(f"ALTER DATABASE {pg_store.dbname} SET log_statement = 'all'")
    log = pg_store.cluster.log_file
    since = log.stat().st_size

    out = hyops_pg(command, *ARGS)

    assert out.returncode == 0, out.stderr
    made = statements(log, since)
    own = [sql for _, sql in made if not sql.startswith(_JOURNAL_LINE)]
    assert len({pid for pid, _ in made}) == 1, made
    assert len(own) <= BUDGET[command], own

"""A worker's weather (stack/queue/outage.py): a call that met a closed connection or an absent
server is tried again and said in one line when the outage starts and one when it ends; any
other error is not retried; a server away past the worker's lost-after time stops it with a
one-line error, never a bug."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from hybridops_tf.base.errors import RefusedError
from hybridops_tf.stack.queue import outage as outage_mod
from hybridops_tf.stack.queue.outage import Outage, lost_connection
from hybridops_tf.store.pgconn import StoreUnavailable


@pytest.fixture(autouse=True)
def _no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outage_mod, "FIRST_WAIT", 0.0)



def test_a_call_that_met_a_closed_connection_is_tried_again_and_said_once_each_way() -> None:
    said: list[str] = []
    tries = iter([psycopg.OperationalError("server closed the connection unexpectedly"),
                  StoreUnavailable("cannot reach the store"), None])

    def call() -> str:
        exc = next(tries)
        if exc is not None:
            raise exc
        return "fetched"

    weather = Outage(60.0, "postgresql://db/x", say=said.append)
    assert weather.call(call, "fetching a job") == "fetched"
    assert len(said) == 2 and "did not answer (fetching a job" in said[0] and "answers again" in said[1]
    assert weather.outages == 1 and weather.gave_up is None


def test_an_error_the_server_answered_is_not_retried() -> None:
    weather = Outage(60.0, "db", say=lambda _: None)
    calls = []

    def call() -> None:
        calls.append(1)
        raise psycopg.errors.RaiseException("job not in doing")

    with pytest.raises(psycopg.errors.RaiseException):
        weather.call(call, "ending job 1")
    assert calls == [1] and not lost_connection(psycopg.errors.UniqueViolation("dup"))


def test_a_server_away_past_the_lost_after_time_stops_the_worker_with_one_line() -> None:
    weather = Outage(0.0, "db", say=lambda _: None)

    async def call() -> None:
        raise psycopg.OperationalError("connection refused")

    with pytest.raises(RefusedError) as caught:
        asyncio.run(weather.call_async(call, "heartbeat"))
    assert caught.value is weather.gave_up and "past this worker's lost-after time" in caught.value.message


def test_a_wrapped_connection_error_counts_as_lost() -> None:
    try:
        try:
            raise psycopg.OperationalError("terminating connection due to administrator command")
        except psycopg.OperationalError as inner:
            raise RuntimeError("ConnectorException") from inner
    except RuntimeError as outer:
        assert lost_connection(outer)

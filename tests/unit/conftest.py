"""Fixtures of the unit tests (tests/conftest.py holds those both engine suites use)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.serverless_stores import KINDS, Serverless


@pytest.fixture(params=KINDS)
def serverless(request: pytest.FixtureRequest, tmp_path: Path) -> Serverless:
    """Each store without a server in turn (tests/unit/serverless_stores.py)."""
    return Serverless.make(request.param, tmp_path)

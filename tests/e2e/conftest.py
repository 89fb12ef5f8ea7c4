"""Shared fixtures of the real-protocol tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gatewayhelp import Gateway, need_gateway


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    """The mock gateway on loopback, started for one test."""
    gw = Gateway(need_gateway(), tmp_path)
    gw.start()
    yield gw
    gw.stop()

"""The QQ channel's tests: a OneBot v11 implementation of our own (onebotfake.py) on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from onebotfake import FakeOneBot


@pytest.fixture
def onebot() -> Iterator[FakeOneBot]:
    fake = FakeOneBot()
    fake.start()
    yield fake
    fake.stop()

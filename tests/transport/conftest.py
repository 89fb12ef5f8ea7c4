"""The transport tests' event loops run on looptime's virtual clock: a wait returns at once,
and the loop's time jumps by what it waited."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import looptime
import pytest


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"virtual-time": lambda: looptime.patch_event_loop(asyncio.new_event_loop(),
                                                              start=0)}

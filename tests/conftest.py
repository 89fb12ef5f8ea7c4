from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from engine.views import strict as strict_views

# CI explores the same examples every run (a red CI blocks landing); locally they vary, so the
# property tests keep finding new games.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent

# Safe views (engine/views.py): everything the engine hands out to read is a read-only proxy in
# the tests, so a rule that writes what it only peeked fails at that line.
strict_views()


# The contracts the project is tested against live in the repository (docs/spec/), so the tests
# read nothing outside it; tests/test_spec_copy.py holds them to the digests they were copied
# with (docs/spec/README.md: taking a newer original over).
SPEC = ROOT / "docs" / "spec"


@pytest.fixture(scope="session")
def rules_text() -> str:
    return (SPEC / "RULES.md").read_text(encoding="utf-8")

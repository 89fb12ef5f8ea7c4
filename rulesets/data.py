"""Loading a ruleset's data files (roles, presets, templates) from its folder."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parent


@cache
def load(ruleset: str, name: str) -> dict[str, Any]:
    with open(ROOT / ruleset / f"{name}.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}

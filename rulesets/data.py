"""Loading a ruleset's data files (roles, presets, templates) from its folder."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parent

# libyaml's parser when PyYAML was built with it: the same documents (every YAML file of the
# project reads alike with both), some ten times faster to read. Start-up and a ruleset's first
# command read every data file: 190 ms with the pure-Python parser, 22 ms with this one.
YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(text: str) -> Any:
    """`yaml.safe_load` of a text, on libyaml when there is one. A text it refuses is read
    again by the pure-Python parser, whose error shows the line with a caret under the fault
    (a scenario's author reads it)."""
    try:
        return yaml.load(text, Loader=YAML_LOADER)
    except yaml.YAMLError:
        if YAML_LOADER is yaml.SafeLoader:
            raise
        return yaml.safe_load(text)


@cache
def load(ruleset: str, name: str) -> dict[str, Any]:
    return read_yaml((ROOT / ruleset / f"{name}.yaml").read_text(encoding="utf-8")) or {}

"""rulesets.data.read_yaml: libyaml's parser reads every YAML file of the project as the
pure-Python safe loader does, and a text it refuses gets the pure-Python parser's error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from rulesets.data import YAML_LOADER, read_yaml

ROOT = Path(__file__).resolve().parents[1]
SKIP = {".venv", "node_modules", ".git"}


def _project_yaml() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP]
        found += [Path(folder, f) for f in files if f.endswith((".yaml", ".yml"))]
    return sorted(found)


def test_the_fast_loader_is_libyaml_where_pyyaml_has_it() -> None:
    if yaml.__with_libyaml__:
        assert YAML_LOADER is yaml.CSafeLoader


def test_every_project_yaml_reads_as_the_safe_loader_reads_it() -> None:
    files = _project_yaml()
    assert len(files) > 150  # the scenarios, the rulesets' data, the chat texts
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert read_yaml(text) == yaml.safe_load(text), path


def test_a_refused_text_gets_the_pure_python_error_with_its_caret() -> None:
    text = "name: x\nsteps:\n  - a: [1\n"
    with pytest.raises(yaml.YAMLError) as fast:
        read_yaml(text)
    with pytest.raises(yaml.YAMLError) as slow:
        yaml.safe_load(text)
    assert str(fast.value) == str(slow.value)
    assert "^" in str(fast.value)

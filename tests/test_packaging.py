"""The distribution carries what an installed wolfjudge needs (issue 9): the migrations (so
`wolfjudge migrate` works without a checkout), the chat texts, the vocabulary, the rulesets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the distribution is built from: a copy of these, so that a `build/` left in the checkout
# by an earlier build (setuptools reuses it) cannot put a file that is gone into the wheel.
SOURCES = ("pyproject.toml", "README.md", "engine", "rulesets", "bot", "migrations")


def test_an_installed_wheel_migrates_a_fresh_database(tmp_path: Path) -> None:
    wheels, source = tmp_path / "wheels", tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation",
                    "--no-deps", "-w", str(wheels), str(source)], check=True,
                   capture_output=True, cwd=tmp_path)
    (wheel,) = wheels.glob("wolfjudge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("migrations/env.py", "migrations/script.py.mako",
                   "migrations/versions/0001_initial_schema.py", "bot/texts.yaml", "bot/feed.yaml",
                   "bot/commands/vocabulary.yaml", "rulesets/classic/data.yaml"):
        assert needed in names, needed
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(wheel)], check=True, capture_output=True, cwd=tmp_path)
    db = tmp_path / "fresh.db"
    env = {**os.environ, "PYTHONPATH": str(site)}  # the installed copy, not the checkout
    out = subprocess.run(
        [sys.executable, "-c", "import bot, sys; from bot.cli import main; "
                               "print(bot.__file__); sys.exit(main(['migrate', '--db', "
                               f"'sqlite:///{db}']))"],
        capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith(str(site))
    assert "schema at" in out.stdout and db.exists()

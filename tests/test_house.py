"""The house (issue 22): one handler per verb, and no arrow that runs back up.

- Every verb of bot/commands/vocabulary.yaml has a handler in the chat layer's registry, and
  every handler a verb (bot/chat/verbs.py); a verb a game names itself is handled at no other
  stage.
- The store imports neither the service nor the chat layer; a transport does not import the
  chat layer; nothing in bot/ but the store runs SQL: the chat layer, the forum reader, the
  service, the outbox (its statements: bot/store/outbox.py) and the CLI ask the store.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from astnames import imports

from bot.chat.verbs import FREE, Registry, handles
from bot.commands.vocabulary import VERBS

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bot"


def test_every_verb_has_a_handler_and_every_handler_a_verb(tmp_path: Path) -> None:
    from bot.chat.bot import ChatBot
    from bot.service import Service
    from bot.store import migrate
    from bot.transport.memory import MemoryTransport

    url = f"sqlite:///{tmp_path / 'h.db'}"
    migrate(url)
    service = Service(url)
    try:
        verbs = ChatBot(service, MemoryTransport()).verbs
    finally:
        service.close()
    assert verbs.verbs() == set(VERBS)
    free = {v for v, stage, _ in verbs.table if stage == FREE}
    assert not [k for k in verbs.table if k[0] in free and k[1] != FREE]


def test_a_handler_names_only_verbs_of_the_vocabulary_and_only_once() -> None:
    with pytest.raises(ValueError, match="no such verbs"):
        handles("fly", stage=FREE)

    class One:
        @handles("join", stage=FREE)
        def a(self, r: object) -> None: ...

    class Two:
        @handles("join", stage=FREE)
        def b(self, r: object) -> None: ...

    with pytest.raises(ValueError, match="two handlers"):
        Registry().collect([One(), Two()])


def modules(folder: str) -> list[Path]:
    return sorted((BOT / folder).rglob("*.py")) if (BOT / folder).is_dir() else [
        BOT / f"{folder}.py"]


@pytest.mark.parametrize("lower, higher", [
    ("store", "bot.service"), ("store", "bot.chat"), ("store", "bot.audit"),
    ("transport", "bot.chat"), ("router", "bot.service"), ("router", "bot.store"),
    ("feed", "bot.store"), ("outbox", "bot.chat"), ("outbox", "bot.service"),
    ("forum", "bot.chat")])
def test_no_arrow_runs_back_up(lower: str, higher: str) -> None:
    for path in modules(lower):
        bad = [n for n in imports(path) if n == higher or n.startswith(higher + ".")]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_only_the_store_runs_sql() -> None:
    for path in BOT.rglob("*.py"):
        rel = path.relative_to(BOT)
        if rel.parts[0] == "store":
            continue
        names = imports(path)
        assert not any(n == "sqlalchemy" or n.startswith("sqlalchemy.") for n in names), rel
        source = path.read_text(encoding="utf-8")
        assert "db.read(" not in source and "db.write(" not in source, rel

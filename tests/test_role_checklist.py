"""The checklist of "How to add a role" (docs/architecture.md), for every skill of every role of
every registered ruleset, by night or by day, and for a ruleset's own skills (which belong to no
role: the standard board's 上警, 退水, 撕警徽). Each skill word needs:

- a verb of the chat vocabulary that becomes it in that ruleset (bot/commands/vocabulary.yaml
  `skills:`), and its word in the judge's feed (bot/feed.yaml `skill_words`);
- help: one of the verb's words in the role DM (data.yaml `role_help`; not for a skill that
  fills a slot of its own, anomaly's 过载, which the wolf head grants to derivatives and their
  notice names, nor for the ruleset's own) and in what `帮助` lists (bot/texts.yaml `duty:` of
  the ruleset, `help_*`);
- a word for each cause its role puts characters out by (common templates `words.causes`);
- the random players (tests/randomplay*.py) and the simulator's agents (bot/simulate/) using
  it: each has it accepted in a few games of the ruleset;
- for each event those accepted commands emitted, a payload model (engine/payloads.py) and a
  wording in the ruleset's templates (a player's or the judge's; an empty one is a choice).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

import pytest
from randomplay import random_game, random_player

import bot.render as render
from bot.commands.vocabulary import VERBS
from bot.feed import wording
from bot.simulate.driver import GameDriver
from bot.texts import texts
from engine.commands import Act
from engine.events import Event
from engine.payloads import PAYLOADS
from engine.ruleset import get_ruleset, ruleset_names
from rulesets.common.roles import Role, RoleBook
from rulesets.data import load

RULESETS = ruleset_names()
MAX_GAMES = 80  # random games (and simulated ones, per agent) until every skill was used


def book_of(ruleset: str) -> RoleBook:
    book = getattr(get_ruleset(ruleset), "book", None)
    assert isinstance(book, RoleBook), f"{ruleset}: its roles are a RoleBook (`book`)"
    return book


def skills(ruleset: str) -> dict[str, Role | None]:
    """Every skill word of the ruleset: its role, or None for the ruleset's own."""
    book = book_of(ruleset)
    out: dict[str, Role | None] = {w: r for r in book.roles.values() for w in r.skill_words}
    out.update(dict.fromkeys(book.own_skills))
    return out


def aliases(ruleset: str, word: str) -> list[str]:
    return [a for spec in VERBS.values() if spec.skills.get(ruleset) == word
            for a in spec.aliases]


def help_texts(ruleset: str) -> str:
    """What `帮助` may list: the ruleset's duties and the day's verbs (bot/texts.yaml)."""
    t = texts()
    return "\n".join([*map(str, t["duty"].get(ruleset, {}).values()),
                      *(str(v) for k, v in t.items() if k.startswith("help_"))])


def static_problems(ruleset: str, word: str, role: Role | None) -> list[str]:
    """What the skill `word` lacks of the words a person reads."""
    words = aliases(ruleset, word)
    problems = []
    if not words:
        problems.append("no verb of bot/commands/vocabulary.yaml becomes it (`skills:`)")
    if word not in wording()["skill_words"]:
        problems.append("no word in the judge's feed (bot/feed.yaml skill_words)")
    if role is not None and word not in role.skill_slots:
        role_help = load(ruleset, "data")["role_help"].get(role.name, "")
        if not any(w in role_help for w in words):
            problems.append(f"the role DM of {role.name} (data.yaml role_help) does not name it")
    if not any(w in help_texts(ruleset) for w in words):
        problems.append("帮助 does not name it (bot/texts.yaml duty / help_*)")
    causes = load("common", "templates")["words"]["causes"]
    problems += [f"no word for its out cause {c!r} (common templates words.causes)"
                 for c in (role.out_causes if role else ()) if c not in causes]
    return problems


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_skill_has_a_verb_help_a_feed_word_and_its_causes_words(ruleset: str) -> None:
    problems = [f"{ruleset} {role.name if role else '(the ruleset)'} {word}: {p}"
                for word, role in skills(ruleset).items()
                for p in static_problems(ruleset, word, role)]
    assert not problems, "\n".join(problems)


def used_until_all(ruleset: str, games: Callable[[int], Iterator[tuple[Act, list[Event]]]],
                   ) -> tuple[Counter[str], dict[str, set[str]]]:
    """Play games until every skill of the ruleset was accepted (at most MAX_GAMES): how often
    each skill was, and the event types its accepted commands emitted."""
    wanted = set(skills(ruleset))
    used: Counter[str] = Counter()
    emitted: dict[str, set[str]] = defaultdict(set)
    for i in range(MAX_GAMES):
        for cmd, events in games(i):
            used[cmd.skill] += 1
            emitted[cmd.skill] |= {e.type for e in events}
        if wanted <= set(used):
            break
    return used, emitted


def random_players(ruleset: str) -> Callable[[int], Iterator[tuple[Act, list[Event]]]]:
    def game(i: int) -> Iterator[tuple[Act, list[Event]]]:
        trace = random_game(ruleset, random.Random(i), i)
        return ((cmd, evs) for _, cmd, evs in trace.accepted if isinstance(cmd, Act))
    return game


def simulated(ruleset: str) -> Callable[[int], Iterator[tuple[Act, list[Event]]]]:
    """Simulated games (bot/simulate/), the random and the heuristic agents in turn, on the
    random player's games' options and player counts."""
    games = random_player(ruleset)[1]

    def game(i: int) -> Iterator[tuple[Act, list[Event]]]:
        args = games[(i // 2) % len(games)]
        driver = GameDriver(ruleset, args.get("players", 12), args.get("options", {}),
                            ("random", "heuristic")[i % 2], 1, i)
        accepted: list[tuple[Act, list[Event]]] = []
        told: list[list[Event]] = []
        deliver, send = driver.deliver, driver.send

        def recording(events: list[Event]) -> None:
            told.append(events)
            deliver(events)

        def sending(cmd: object) -> bool:
            told.clear()
            ok = send(cmd)
            if ok and isinstance(cmd, Act):
                accepted.append((cmd, told[-1]))
            return ok

        driver.deliver = recording  # type: ignore[method-assign]
        driver.send = sending  # type: ignore[method-assign]
        driver.play()
        return iter(accepted)
    return game


def unused(ruleset: str, used: Counter[str]) -> list[str]:
    return sorted(w for w in skills(ruleset) if not used[w])


def wordless(ruleset: str, emitted: dict[str, set[str]]) -> list[str]:
    """Events of a skill with no payload model, or no wording in the ruleset's templates."""
    templates = render._templates(ruleset)
    return [f"{word}: {t} has no payload model" if t not in PAYLOADS else
            f"{word}: {t} has no wording ({ruleset} templates events/judge)"
            for word in sorted(emitted) for t in sorted(emitted[word])
            if t not in PAYLOADS or (t not in templates["events"] and t not in templates["judge"])]


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_random_players_use_every_skill_and_its_events_are_worded(ruleset: str) -> None:
    used, emitted = used_until_all(ruleset, random_players(ruleset))
    assert not unused(ruleset, used), f"{ruleset}: skills no random player of " \
        f"tests/randomplay*.py had accepted in {MAX_GAMES} games: {unused(ruleset, used)}"
    assert not wordless(ruleset, emitted), "\n".join(wordless(ruleset, emitted))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_simulators_agents_use_every_skill(ruleset: str) -> None:
    used, emitted = used_until_all(ruleset, simulated(ruleset))
    assert not unused(ruleset, used), f"{ruleset}: skills the agents of bot/simulate/ never " \
        f"had accepted in {MAX_GAMES} games: {unused(ruleset, used)}"
    assert not wordless(ruleset, emitted), "\n".join(wordless(ruleset, emitted))


def test_the_checklist_catches_a_skill_that_lacks_its_parts() -> None:
    """A new day skill `ward` of a new role, declared and nothing else: every part is missing."""
    role = Role(name="warden", skills={"ward": lambda ctx, st, cmd: None}, out_causes=("warded",))
    problems = static_problems("classic", "ward", role)
    assert len(problems) == 5, problems  # the verb, the feed word, the role DM, 帮助, the cause
    assert unused("classic", Counter({"kill": 1})) and "kill" not in unused(
        "classic", Counter({"kill": 1}))
    assert wordless("classic", {"ward": {"Warded", "SeatOut"}}) == [
        "ward: Warded has no payload model"]
    # the role DM is checked once a verb exists: classic's villager names no skill at all
    villager = Role(name="villager", night_skills={"see": lambda *a: None})
    assert any("role_help" in p for p in static_problems("classic", "see", villager))

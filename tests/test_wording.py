"""No internal identifier ever reaches a person (issue 20, item 5).

Every text a person can read is checked: every template of every ruleset (player events, the
judge's wording, refusals, the small words), every text of the chat layer, the judge's feed
and the command vocabulary, as written in their files; and the texts of whole games: random
games of every registered ruleset routed as the bot routes them (bot/router.py) with every
judge's feed setting, each refusal, the judge's and each seat's `状态`, `帮助` and `票型` on
the way, and the demo games of every ruleset through the chat layer (with and without a
public room).

A text fails on `key=value`, `_id`, a snake_case or CamelCase identifier, or `〔`, outside the
allow-list: option keys as the judge types them (they are the judge's own words), the game's
codes, hex commitments, URLs; and on a time with seconds (`2026-12-02 08:00:00`: a time reads
`12-02 08:00`, or `08:00` where the day is plain, issue 33).
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from randomplay import random_game

from bot.chat import reports
from bot.chat.demo import JUDGE, Demo
from bot.chat.lobby import CHAT_OPTIONS
from bot.commands.vocabulary import MESSAGES, VERBS
from bot.feed import FEEDS
from bot.render import render_rejection
from bot.router import RoomsView, route
from engine import handle
from engine.commands import Tick
from engine.events import Rejection
from engine.ruleset import get_ruleset, ruleset_names
from rulesets.data import load, read_yaml

ROOT = Path(__file__).resolve().parents[1]
RULESETS = ruleset_names()
BAD = [
    ("key=value", re.compile(r"[A-Za-z_]+=")),
    ("an id", re.compile(r"_id\b")),
    ("a snake_case name", re.compile(r"\b[a-z]+_[a-z_]+\b")),
    ("a CamelCase name", re.compile(r"\b[A-Z][a-z]+[A-Z][A-Za-z]*\b")),
    ("〔", re.compile("〔")),
    # README "Options" / issue 33: a time reads like 12-02 08:00, never with seconds
    ("a time with seconds", re.compile(r"\d{1,2}:\d{2}:\d{2}")),
]
# What a person may read although it looks like code: option keys as the judge writes them
# (with their values), URLs, hex digests, the project's name.
OPTION_KEYS = sorted({k for r in RULESETS for k in get_ruleset(r).option_spec} | set(CHAT_OPTIONS),
                     key=len, reverse=True)
ALLOWED = [re.compile("|".join(re.escape(k) for k in OPTION_KEYS) + r"(?:\s*[=:]\s*[\w,.-]+)?"),
           re.compile(r"https?://\S+"), re.compile(r"\b[0-9a-f]{16,}\b"),
           re.compile(r"\bwolfjudge\b"),
           # the QQ side's products, named as an operator finds them (README "Running on QQ")
           re.compile(r"\b(?:NapCat|LLOneBot|OneBot|WebSocket|WebUI)\b")]
PLACEHOLDER = re.compile(r"\{[a-z_]*\}")


def option_values() -> set[str]:
    """Values of the options a judge types (`first_to_reach`, `judge_ruling`, …): the words of
    every option's list of values, and the text defaults."""
    import typing

    values: set[str] = set()
    for ruleset in RULESETS:
        for field in get_ruleset(ruleset).options_model.model_fields.values():
            for arg in (*typing.get_args(field.annotation), field.default):
                inner = typing.get_args(arg) or (arg,)
                values |= {v for v in inner if isinstance(v, str)}
    return values


OPTION_VALUES = sorted(option_values() | {"judge_ruling", "last_event_reverted"}, key=len,
                       reverse=True)
ALLOWED.append(re.compile("|".join(rf"\b{re.escape(v)}\b" for v in OPTION_VALUES if "_" in v)))


def problems(text: str) -> list[str]:
    for allowed in ALLOWED:
        text = allowed.sub(" ", text)
    return [f"{what}: {m.group(0)!r}" for what, pattern in BAD for m in pattern.finditer(text)]


def leaves(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a YAML tree (values only: keys are the code's)."""
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, dict):
        for k, v in node.items():
            if k != "by":  # a template's selector: the field it reads
                yield from leaves(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, f"{path}[{i}]")


def check(texts: Iterator[tuple[str, str]]) -> None:
    bad = [f"{where}: {p} in {text[:120]!r}" for where, text in texts for p in problems(text)]
    assert not bad, "\n".join(bad[:40])


def test_the_guard_catches_identifiers() -> None:
    assert problems("【DEMO01 v3】1号 投票 mode=vote target=3")
    assert problems("时限到 deadline_id=day_open:1")
    assert problems("〔NightResolving〕day=1")
    assert problems("尚未行动（day_close，截止 03-01 21:00）")
    assert not problems("本局选项：votes.channel=dm groups.mode=auto public.channel=room")
    assert not problems("如不希望这样，下一局创建时加上 cards.night_yellow_counts_to_red=false。")
    assert not problems("随机种子：a744557675cc1b5a04a401dd6d981804ffdf8bcd6da5c17d46b1b7ab80")
    assert not problems("发贴子链接（如 https://tieba.baidu.com/p/1234567890）")
    assert not problems("连不上 NapCat：它的 WebSocket 服务器开了吗？")
    assert problems("连不上 NapCatServer")


def test_the_guard_catches_a_time_with_seconds() -> None:
    assert problems("法官调整时间：第1天关门时间改为 2026-12-01 22:30:00。")
    assert problems("截止 8:00:00")
    assert not problems("法官调整时间：第1天关门时间改为 12-01 22:30。")


# the files ----------------------------------------------------------------------------------
def yaml_texts() -> Iterator[tuple[str, str]]:
    for name in ("common", *RULESETS):
        doc = load(name, "templates")
        for part in ("events", "judge", "rejections", "words"):
            for where, text in leaves(doc.get(part, {}), f"{name}/templates.yaml:{part}"):
                yield where, PLACEHOLDER.sub("", text)
        data = load(name, "data") if name != "common" else {}
        for part in ("role_names", "camp_names", "stage_names", "role_help", "name"):
            for where, text in leaves(data.get(part, {}), f"{name}/data.yaml:{part}"):
                yield where, text
    for path in ("bot/texts.yaml", "bot/feed.yaml", "bot/options.yaml"):
        doc = read_yaml((ROOT / path).read_text(encoding="utf-8"))
        doc.pop("modes", None)  # the judge's words -> the setting's key (a mapping's values)
        for types in ("notable", "quiet", "always"):  # event types the code reads
            doc.pop(types, None)
        for where, text in leaves(doc, path):
            yield where, PLACEHOLDER.sub("", text)
    for key, spec in VERBS.items():
        yield f"vocabulary.yaml:{key}.usage", spec.usage
    for where, text in leaves(dict(MESSAGES), "vocabulary.yaml:messages"):
        yield where, PLACEHOLDER.sub("", text)


def test_every_template_and_text_is_free_of_identifiers() -> None:
    check(yaml_texts())


def test_the_words_a_key_becomes_are_words() -> None:
    """The tables that turn the engine's keys into words (duties, causes, random picks,
    waivers, skills) cover every key the engine uses."""
    words = load("common", "templates")["words"]
    causes = {c for r in RULESETS for c in get_ruleset(r).out_causes}
    assert causes <= set(words["causes"]), causes - set(words["causes"])


# whole games --------------------------------------------------------------------------------
def routed_texts(trace: Any, ruleset: str, seed: int) -> Iterator[tuple[str, str]]:
    """Every message of a random game as the bot routes it, with each feed setting (the
    game replayed, so that each commit is routed with the state it made and each tick
    names what it fired), and its refusals."""
    rooms = (RoomsView(), RoomsView(frozenset({"public", "wolves"}),
                                    {"wolves": frozenset({-1})}))[seed % 2]
    state = trace.initial_state
    for feed in FEEDS:
        for m in route("G1", state, trace.initial_events, head=0, cmd=None, rooms=rooms,
                       feed=feed):
            yield f"{ruleset}#{seed} start {m.target}", m.text
    head = len(trace.initial_events)
    for at, cmd, _ in trace.accepted:
        out = handle(state, cmd, at)
        assert not isinstance(out, Rejection)
        after, events = out
        dl = state.deadline(cmd.deadline_id) if isinstance(cmd, Tick) else None
        for feed in FEEDS:
            for m in route("G1", after, events, head=head, cmd=cmd, rooms=rooms, feed=feed,
                           deadline=dl, dm_out=seed % 3 == 0):
                yield f"{ruleset}#{seed} {cmd.kind} {m.target}", m.text
        head += 1 + len(events)
        state = after
    for _, _, rejection in trace.rejections:
        yield f"{ruleset}#{seed} refusal {rejection.code}", render_rejection(rejection, ruleset)


def view_texts(state: Any, now: datetime) -> Iterator[tuple[str, str]]:
    players: dict[int, tuple[str | None, str | None]] = {
        st.seat: (f"wx{st.seat}", f"马甲{st.seat}") for st in state.seats}
    yield "judge 状态", reports.judge_status(state, "G1", players)
    yield "票型", reports.vote_tally(state, "G1", now)
    for st in state.seats:
        yield f"{st.seat} 帮助", reports.player_help(state, st.seat, True)
        yield f"{st.seat} 状态", reports.player_status(state, st.seat, "G1", "马甲", [])


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", range(6))
def test_random_games_tell_nobody_an_identifier(ruleset: str, seed: int) -> None:
    trace = random_game(ruleset, random.Random(seed), seed)
    check(routed_texts(trace, ruleset, seed))
    # the views at every tenth step and at the end
    state = trace.initial_state
    for i, (at, cmd, _) in enumerate(trace.accepted):
        out = handle(state, cmd, at)
        assert not isinstance(out, Rejection)
        state = out[0]
        if i % 10 == 0:
            check(view_texts(state, at))
    check(view_texts(state, trace.accepted[-1][0]))


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("options,feed", [((), "全部"), (("public.channel=room",), "摘要")],
                         ids=["dm", "room"])
def test_demo_games_tell_nobody_an_identifier(tmp_path: Path, ruleset: str,
                                              options: tuple[str, ...], feed: str) -> None:
    out = io.StringIO()
    demo = Demo(ruleset, 1, out, f"sqlite:///{tmp_path / 'demo.db'}", options)
    demo.say(JUDGE, f"法官通知 {feed}")
    assert demo.run() != "none"
    said = [line for line in out.getvalue().splitlines() if line.startswith(("→", "  "))]
    assert len(said) > 100
    check((f"{ruleset} demo", line) for line in said)

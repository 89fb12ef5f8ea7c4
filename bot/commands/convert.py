"""A `Parsed` chat command -> the engine command it stands for (engine/commands.py).

Skill verbs take their engine skill from vocabulary.yaml, per ruleset; votes, handover, last
words and surrender are fixed engine commands. Bot-level verbs (报名, 帮助, 开始 …) are not
engine commands: `judge_command` returns None for them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from bot.commands.parse import Parsed
from bot.commands.vocabulary import MESSAGES, RULESET_NAMES, VERBS, VerbSpec
from engine.commands import (
    Act,
    Handover,
    JudgeCard,
    JudgeCorrection,
    JudgeExtend,
    JudgeProxy,
    JudgeSetSchedule,
    JudgeSetTime,
    JudgeWaiver,
    LastWords,
    Surrender,
    Vote,
    VoteMode,
)

Command = Any  # one of engine.commands' models (the annotated union is not a class)


class ConvertError(ValueError):
    """The command exists but not here (this ruleset, this sender); `message` is Chinese."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _alias(spec: VerbSpec) -> str:
    return spec.aliases[0]


def _target(p: Parsed, index: int) -> int | None:
    """The target seat at `index`, None for 弃权."""
    return None if p.abstain or len(p.seats) <= index else p.seats[index]


def _judge_form(p: Parsed) -> bool:
    """改票/更正 with the voter's seat first: the judge entering a forum vote."""
    return len(p.seats) == 2 or (len(p.seats) == 1 and p.abstain)


def player_command(p: Parsed, *, seat: int, ruleset: str) -> Command:
    """The engine command a player's `p` stands for, acting for `seat`."""
    spec = VERBS[p.verb]
    if spec.skills:
        skill = spec.skills.get(ruleset)
        if skill is None:
            raise ConvertError(MESSAGES["not_in_ruleset"].format(
                ruleset=RULESET_NAMES.get(ruleset, ruleset), alias=_alias(spec)))
        targets: tuple[int | None, ...] = (None,) if spec.targets_none else p.seats
        options: dict[str, int | bool | str | None] = {"mode": p.mode} if p.mode is not None else {}
        return Act(seat=seat, skill=skill, targets=targets, options=options)
    if p.verb in ("change", "correct") and _judge_form(p):
        raise ConvertError(MESSAGES["player_form"].format(usage=spec.usage_for("player")))
    if p.verb == "vote":
        return Vote(seat=seat, mode="vote", target=_target(p, 0))
    if p.verb == "abstain":
        return Vote(seat=seat, mode="vote", target=None)
    if p.verb == "change":
        return Vote(seat=seat, mode="change", target=_target(p, 0))
    if p.verb == "correct":  # a request the judge rules on (RULES.md AMB-P-09)
        return Vote(seat=seat, mode="request_correct", target=_target(p, 0))
    if p.verb == "handover":
        return Handover(seat=seat, target=p.seats[0])
    if p.verb == "lastwords":
        return LastWords(seat=seat, text=p.text)
    if p.verb == "surrender":
        return Surrender(seat=seat)
    raise ConvertError(MESSAGES["not_a_player_command"].format(alias=_alias(spec)))


def _on_day_of(at: datetime, p: Parsed) -> datetime:
    assert p.time is not None
    return datetime.combine(at.date(), p.time, at.tzinfo)


def _next(at: datetime, p: Parsed) -> datetime:
    """The first time after `at` that the clock reads `p.time`: today's, else tomorrow's."""
    until = _on_day_of(at, p)
    return until if until > at else until + timedelta(days=1)


def judge_command(p: Parsed, *, at: datetime) -> Command | None:
    """The engine command a judge's `p` stands for, `at` being now in the game's time zone;
    None for verbs the bot handles itself."""
    v = p.verb
    if v in ("change", "correct") and not _judge_form(p):
        raise ConvertError(MESSAGES["judge_form"].format(usage=VERBS[v].usage_for("judge")))
    if v == "proxy":
        return JudgeProxy(seat=p.seats[0], target=_target(p, 1))
    if v in ("confirm_correction", "reject_correction"):
        return JudgeCorrection(seat=p.seats[0], accept=v == "confirm_correction")
    if v in ("yellow", "red"):
        return JudgeCard(seat=p.seats[0], color="yellow" if v == "yellow" else "red")
    if v in ("notice", "contact"):
        return JudgeWaiver(seat=p.seats[0], waiver="notice" if v == "notice" else "contact")
    if v == "close_at":  # the next such time: 关门 00:30 at 21:00 runs the day past midnight
        return JudgeSetTime(which="close", at=_next(at, p))  # (P-CLOCK-2)
    if v == "open_at":  # the next open: 开门 08:00 at 22:00 is tomorrow's (P-CLOCK-1)
        return JudgeSetTime(which="open", at=_next(at, p))
    if v == "schedule":
        assert p.time is not None and p.time2 is not None
        return JudgeSetSchedule(open=p.time, close=p.time2)
    if v == "extend":  # 延时 3 01:00 at 22:00 means tomorrow's 01:00
        return JudgeExtend(seat=p.seats[0], at=_next(at, p))
    mode: dict[str, VoteMode] = {"record_vote": "vote", "change": "change", "correct": "correct",
                                 "void": "void"}
    if v in mode:
        return Vote(seat=p.seats[0], mode=mode[v], target=None if v == "void" else _target(p, 1))
    return None

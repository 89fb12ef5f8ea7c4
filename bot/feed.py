"""The judge's feed (法官通知): what one commit tells the game's judge, worded as a judge says it.

A judge chooses per game (and as the default of their next games) how much they hear:

- `all` (全部): every accepted command, one message per commit: what happened (`1号 投票给 3号`,
  `时限到：第1天关门`) and what it caused, each event as the judge reads it;
- `summary` (摘要, the default): only what needs a judge: the start, deadlines that did something,
  the night's resolution, cards, rulings to make, the end, and the answer to the judge's own
  commands; not every vote or receipt;
- `off` (关闭): only the answers to the judge's own commands.

The wording is data (bot/feed.yaml, the rulesets' `judge:` templates); nothing here reaches a
person as an identifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

from bot.render import has_judge_wording, render_for_judge
from engine.commands import Act, Command, Tick
from engine.events import Event
from engine.model import Deadline
from rulesets.data import load, read_yaml

Feed = Literal["all", "summary", "off"]
FEEDS: tuple[Feed, ...] = ("all", "summary", "off")
DEFAULT_FEED: Feed = "summary"


@cache
def wording() -> dict[str, Any]:
    return cast(dict[str, Any], read_yaml(
        (Path(__file__).parent / "feed.yaml").read_text(encoding="utf-8")))


def feed_of(word: str) -> Feed | None:
    """The setting a judge wrote (`全部`, `摘要`, `关闭`, or its internal name), or None."""
    value = wording()["modes"].get(word.strip(), word.strip())
    return cast(Feed, value) if value in FEEDS else None


def feed_name(feed: str) -> str:
    return str(wording()["names"].get(feed, wording()["names"][DEFAULT_FEED]))


def _seat(n: int | None) -> str:
    words = load("common", "templates")["words"]
    return str(words["abstain"] if n is None else words["seat"].format(n=n))


def _seats(items: Sequence[int]) -> str:
    words = load("common", "templates")["words"]
    return str(words["separator"].join(words["seat"].format(n=n) for n in items))


def submission(skill: str, targets: Sequence[int | None]) -> str:
    """A night action in the words a player would use: `刀 5号`."""
    table = wording()["skill_words"]
    verb = table.get(skill, table["default"])
    nobody = load("common", "templates")["words"]["nobody"]
    who = " ".join(nobody if n is None else _seat(n) for n in targets)
    return f"{verb} {who}".strip()


def describe_deadline(dl: Deadline | None, parent: Deadline | None = None) -> str:
    """A deadline as the judge would name it: `第1天关门`, `第2天夜晚查验截止`."""
    w = wording()
    if dl is None:
        return str(w["unknown_deadline"])
    table = w["deadlines"]
    duties = load("common", "templates")["words"]["duties"]
    key = dl.id.rsplit(":", 1)[-1] if dl.kind in ("night", "setup") else dl.kind
    fields = {"day": dl.day, "seats": _seats(dl.seats), "duty": duties.get(key, duties["default"]),
              "parent": describe_deadline(parent) if parent is not None else ""}
    return str(table.get(dl.kind, table["default"]).format(**fields))


def describe_command(cmd: Command, deadline: Deadline | None = None,
                     parent: Deadline | None = None, *, by_judge: bool = False,
                     at: datetime | None = None) -> str:
    """The command as the judge would say it. `deadline` (and its `parent`, for a reminder):
    what a tick fired, as the state before it held it. `by_judge`: a vote the judge entered
    from the forum thread, `at` its post time."""
    table = wording()["commands"]
    data = cmd.model_dump()
    seat = data.get("seat")
    fields: dict[str, Any] = {"seat": seat, "target": _seat(data.get("target"))}
    template: Any = table.get(cmd.kind, table["default"])
    if isinstance(cmd, Act):
        fields["what"] = submission(cmd.skill, cmd.targets)
    elif isinstance(cmd, Tick):
        fields["deadline"] = describe_deadline(deadline, parent)
    elif cmd.kind == "vote":
        template = template[data["mode"]]
    elif cmd.kind == "judge_correction":
        template = template["true" if data["accept"] else "false"]
    elif cmd.kind == "judge_card":
        template = template[data["color"]]
    elif cmd.kind == "judge_waiver":
        template = template[data["waiver"]]
    elif cmd.kind == "judge_set_time":
        template = template[data["which"]]
        fields["at"] = data["at"].strftime("%m-%d %H:%M")
    elif cmd.kind == "judge_extend":
        fields["at"] = data["at"].strftime("%m-%d %H:%M")
    elif cmd.kind == "judge_set_schedule":
        fields.update(open=data["open"].strftime("%H:%M"), close=data["close"].strftime("%H:%M"))
    text = str(template).format(**fields)
    if by_judge and cmd.kind == "vote":
        when = at.strftime("%H:%M") if at is not None else ""
        return str(wording()["by_judge"]).format(at=when) + text
    return text


def judge_message(code: str, cmd: Command | None, events: Sequence[Event], ruleset: str, *,
                  feed: str = DEFAULT_FEED, asked: bool = False,
                  deadline: Deadline | None = None, parent: Deadline | None = None,
                  public_room: bool = False) -> str | None:
    """The judge's one message about a commit (what happened, then what it caused), or None
    when their feed setting does not want it. `asked`: a judge sent the command (its answer
    always goes). `public_room`: the game has a public room, which the judge is in: public
    events the judge reads there are not repeated (unless the judge's wording says more). The
    end of the game (`always` in feed.yaml) reaches the judge by DM whatever the feed and the
    room, with the 复盘 hint."""
    w = wording()
    always = set(w["always"])
    lines = []
    shown: list[Event] = []
    for ev in events:
        if public_room and ev.audience.public and not has_judge_wording(ev, ruleset) and (
                ev.type not in always):
            continue
        text = render_for_judge(ev, ruleset)
        if text:
            lines.append(text)
            shown.append(ev)
    ended = any(e.type in always for e in events)
    if ended:  # the end goes to the judge always (README), with how to get the 复盘 posts
        lines.append(w["replay_hint"].format(code=code))
    if not (asked or ended or cmd is None or feed == "all"):
        if feed == "off":
            return None
        if isinstance(cmd, Tick):
            if all(e.type in set(w["quiet"]) for e in shown):
                return None
        elif not any(e.type in set(w["notable"]) for e in events):
            return None
    what = describe_command(cmd, deadline, parent,
                            by_judge=asked and cmd is not None and cmd.kind == "vote",
                            at=events[0].at if events else None) if cmd else w["created"]
    return "\n".join([w["title"].format(code=code, what=what), *lines])

"""Chat text -> a `Parsed` command (docs/spec/CHAT.md), driven by vocabulary.yaml.

The grammar: an optional `#CODE` prefix, a verb alias (longest first), then the arguments of
one of the verb's forms. Whitespace, control characters and punctuation between arguments are
separators; the text of 遗言 and 理由 is kept as written.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import time

from bot.commands.numbers import CN_CHARS, NUMBER_RUN, SIGNS, number_value, signed
from bot.commands.vocabulary import MESSAGES, VERBS, Form, Slot, VerbSpec, verbs_for
from engine.commands import MAX_TEXT

__all__ = ["MAX_LINE", "VERBS", "ParseError", "Parsed", "VerbSpec", "normalize", "parse",
           "usage", "verbs_for"]

MAX_LINE = 4096  # characters: a command, or last words, is far shorter
HEAD = 64  # characters enough to find the prefix and verb of an over-long line
ABSTAIN = "弃权"

# Every alias, longest first, so 过载 wins over 过, 投降 over 投, 确认更正 over 更正.
_ALIASES: list[tuple[str, VerbSpec]] = sorted(
    ((a.lower(), spec) for spec in VERBS.values() for a in spec.aliases),
    key=lambda item: -len(item[0]))
_PREFIX = re.compile(r"#([A-Za-z0-9]{1,16})(?![A-Za-z0-9])")
_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2})(?![0-9])")
_RANGE_SEP = re.compile(r"\s*[-~至到—–]\s*")
_CODE = re.compile(r"[A-Za-z0-9]{1,16}")
_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*=[^\s，、；;,]+")
_TOKEN = re.compile(r"\S+")
_FLOOR = re.compile(r"([0-9]{1,5})(?:[-－.#]([0-9]{1,4}))?(?:楼)?(?![0-9])")
# Sentence punctuation that may trail a token (`接替 ab12。`) without being part of it.
# Punctuation that may sit inside a word: `votes.channel=dm`, `21:00`, `09:00-21:00`, `a_b`.
_INNER = frozenset(".:-_'#@/&%?")
_TRAILING = "。，、！？!?,;；：:」』】)）\"'“”‘’…"


@dataclass(frozen=True)
class Parsed:
    verb: str  # canonical key (vocabulary.yaml)
    seats: tuple[int, ...] = ()  # seat numbers in order written
    abstain: bool = False  # 弃权 stood where a target may stand
    time: dt.time | None = None  # a trailing HH:MM, or 作息's open time
    time2: dt.time | None = None  # 作息's close time
    text: str = ""  # 遗言 / 理由 as written, 马甲名, 接替's token
    words: tuple[str, ...] = ()  # codes, choices, ruleset + key=value options
    mode: int | None = None  # 感染 N 1|2
    count: int | None = None  # 新游戏 RULESET 人数
    game: str | None = None  # the `#CODE` prefix, uppercased
    # who the matched form is for (vocabulary.yaml: player | judge | anyone): `改票 3 5` is the
    # judge's form, `改票 5` the player's (not part of the command's value)
    who: str = field(default="player", compare=False)


class ParseError(ValueError):
    """A known verb with malformed arguments; `message` is the polite Chinese reply."""

    def __init__(self, verb: str, message: str) -> None:
        super().__init__(message)
        self.verb = verb
        self.message = message


def usage(verb: str) -> str:
    """The Chinese usage line(s) of a verb, one per line."""
    return VERBS[verb].usage


# ---- characters --------------------------------------------------------------------------
def _is_space(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in "CZ"


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "P"


def _is_sep(ch: str) -> bool:
    return _is_space(ch) or _is_punct(ch)


def _skip_to_text(s: str, i: int) -> int:
    """Like `_skip`, but an opening bracket or quote is the text's own (`遗言 【我】是好人`,
    `遗言 [CQ:at,qq=all]` keep theirs)."""
    while i < len(s) and _is_sep(s[i]) and unicodedata.category(s[i]) not in ("Ps", "Pi"):
        i += 1
    return i


def _skip(s: str, i: int) -> int:
    while i < len(s) and _is_sep(s[i]):
        i += 1
    return i


def _at_boundary(s: str, i: int) -> bool:
    return i >= len(s) or _is_sep(s[i])


def _prepare(text: str) -> str:
    """NFKC, then strip surrounding spaces and punctuation (not the `#` of a prefix, not the
    `?` that asks for help)."""
    s = unicodedata.normalize("NFKC", text)
    start = 0
    while start < len(s) and _is_sep(s[start]) and s[start] not in "#?" and not (
            s[start] in SIGNS and NUMBER_RUN.match(s, start + 1)):  # a sign stays: `-3`
        start += 1
    return s[start:].rstrip()


# ---- argument slots ----------------------------------------------------------------------
class _Fail(Exception):
    """A form does not match; `reason` (a MESSAGES key) and `word` if the cause is clear."""

    def __init__(self, reason: str = "", word: str = "") -> None:
        self.reason = reason
        self.word = word


@dataclass
class _Acc:
    seats: list[int]
    words: list[str]
    times: list[time]
    abstain: bool = False
    text: str = ""
    mode: int | None = None
    count: int | None = None


def _number(s: str, i: int, *, suffix: str = "号") -> tuple[int, int] | None:
    """A number at i (5, 5号, 五号, 十二): (value, end), None if there is none. Raises _Fail if
    it looks like a number but is not 0..99 (100, 三五, 5x)."""
    m = NUMBER_RUN.match(s, i)
    if not m:
        return None
    if signed(s, i):  # `-3` is no seat: a typo must never become a card on a real seat
        raise _Fail("signed", s[i - 1:m.end()][:20])
    end = m.end()
    if not m.group(3) and end < len(s) and s[end] in suffix:
        end += 1  # `12人` for a count
    value = number_value(m.group(1), m.group(2))
    word = s[i:end]
    if end < len(s) and s[end] in ":：" and m.group(1):
        raise _Fail()  # a time, not a seat: the form is wrong, not the number
    tight = m.group(3) or (end > m.end())  # 号 closes the number: `3号5号`
    if value is None or not (tight or _at_boundary(s, end)):
        while end < len(s) and not _is_sep(s[end]):
            end += 1
        raise _Fail("bad_seat", s[i:end][:20] or word)
    return value, end


def _seat(s: str, i: int, acc: _Acc) -> int:
    if s[i] in SIGNS and NUMBER_RUN.match(s, i + 1):  # `+3` (a `-` reads as a separator)
        word = _TOKEN.match(s, i)
        raise _Fail("signed", (word.group(0) if word else s[i:i + 3])[:20])
    got = _number(s, i)
    if got is None:
        word = _TOKEN.match(s, i)
        raise _Fail("bad_seat", word.group(0)[:20]) if word else _Fail()
    acc.seats.append(got[0])
    return got[1]


def _target(s: str, i: int, acc: _Acc) -> int:
    if s.startswith(ABSTAIN, i) and _at_boundary(s, i + len(ABSTAIN)):
        acc.abstain = True
        return i + len(ABSTAIN)
    return _seat(s, i, acc)


def _clock(s: str, i: int) -> tuple[time, int]:
    m = _TIME.match(s, i)
    if not m:
        raise _Fail()
    h, mi = int(m.group(1)), int(m.group(2))
    if h > 23 or mi > 59:
        raise _Fail("bad_time", m.group(0))
    return time(h, mi), m.end()


def _time(s: str, i: int, acc: _Acc) -> int:
    t, end = _clock(s, i)
    acc.times.append(t)
    return end


def _range(s: str, i: int, acc: _Acc) -> int:
    first, end = _clock(s, i)
    sep = _RANGE_SEP.match(s, end)
    if not sep:
        raise _Fail()
    second, end = _clock(s, sep.end())
    acc.times += [first, second]
    return end


def _mode(s: str, i: int, acc: _Acc) -> int:
    got = _number(s, i, suffix="")
    if got is None or got[0] not in (1, 2):
        raise _Fail()
    acc.mode = got[0]
    return got[1]


def _count(s: str, i: int, acc: _Acc) -> int:
    got = _number(s, i, suffix="人")
    if got is None or got[0] < 1:
        raise _Fail()
    acc.count = got[0]
    return got[1]


def _option(s: str, i: int, acc: _Acc) -> int:
    m = _OPTION.match(s, i)
    if not m:
        raise _Fail()
    acc.words.append(m.group(0).rstrip(_TRAILING))
    return m.end()


def _code(s: str, i: int, acc: _Acc) -> int:
    m = _CODE.match(s, i)
    if not m:
        raise _Fail()
    acc.words.append(m.group(0).upper())
    return m.end()


def _token(s: str, i: int, acc: _Acc) -> int:
    m = _TOKEN.match(s, i)
    token = m.group(0).rstrip(_TRAILING) if m else ""
    if not token:
        raise _Fail()
    acc.text = token
    return i + len(token)


def _name(s: str, i: int, acc: _Acc) -> int:
    name = " ".join(s[i:].split())
    while name and _is_sep(name[-1]):
        name = name[:-1]
    if not name:
        raise _Fail()
    if len(name) > MAX_TEXT:
        raise _Fail("text_too_long")
    acc.text = name
    return len(s)


def _text(s: str, i: int, acc: _Acc) -> int:
    text = s[i:].strip()
    if not text:
        raise _Fail()
    if len(text) > MAX_TEXT:
        raise _Fail("text_too_long")
    acc.text = text
    return len(s)


def _floor(s: str, i: int, acc: _Acc) -> int:
    """A forum floor: `12` (floor 12), `12-3` (its third 楼中楼 reply); kept as `12` / `12-3`."""
    m = _FLOOR.match(s, i)
    if not m or not _at_boundary(s, m.end()):
        raise _Fail()
    acc.words.append(m.group(1) if m.group(2) is None else f"{m.group(1)}-{m.group(2)}")
    return m.end()


_MATCHERS: dict[str, Callable[[str, int, _Acc], int]] = {
    "seat": _seat, "target": _target, "time": _time, "range": _range, "mode": _mode,
    "count": _count, "option": _option, "code": _code, "token": _token, "name": _name,
    "text": _text, "floor": _floor}


def _choice(spec: VerbSpec, s: str, i: int, acc: _Acc) -> int:
    for word in sorted(spec.choices, key=len, reverse=True):
        end = i + len(word)
        if s[i:end].lower() == word.lower() and _at_boundary(s, end):
            acc.words.append(spec.choices[word])
            return end
    raise _Fail()


def _match_slot(spec: VerbSpec, slot: Slot, s: str, i: int, acc: _Acc) -> int:
    if slot.kind == "choice":
        return _choice(spec, s, i, acc)
    return _MATCHERS[slot.kind](s, i, acc)


def _match(spec: VerbSpec, form: Form, s: str, i: int) -> tuple[_Acc, int | None]:
    """The form's arguments from s[i:], and where a text argument starts (for normalize)."""
    acc = _Acc(seats=[], words=[], times=[])
    text_at: int | None = None
    for slot in form.slots:
        while True:
            i = _skip_to_text(s, i) if slot.kind == "text" else _skip(s, i)
            if i >= len(s):
                if slot.optional or slot.repeat:
                    break
                raise _Fail()
            if slot.kind == "text":
                text_at = i
            if slot.optional or slot.repeat:
                saved = _Acc(list(acc.seats), list(acc.words), list(acc.times), acc.abstain,
                             acc.text, acc.mode, acc.count)
                try:
                    i = _match_slot(spec, slot, s, i, acc)
                except _Fail as exc:
                    if exc.reason in ("bad_time", "text_too_long"):
                        raise  # clearly meant as this slot, and wrong
                    acc = saved
                    break
            else:
                i = _match_slot(spec, slot, s, i, acc)
            if not slot.repeat:
                break
    if _skip(s, i) < len(s):
        raise _Fail()
    return acc, text_at


# ---- the verb ----------------------------------------------------------------------------
def _verb(s: str) -> tuple[VerbSpec, int] | None:
    """The verb at the start of s and where its arguments begin; None for chatter."""
    for alias, spec in _ALIASES:
        end = len(alias)
        if s[:end].lower() != alias:
            continue
        rest = s[end:]
        if not rest or _is_sep(rest[0]) or (
                rest[0] in SIGNS and not alias.isascii() and NUMBER_RUN.match(rest, 1)):
            pass  # (`投+3`: a command, refused for its sign)
        elif alias.isascii() or not spec.takes_args:
            # `kill5`, `过来`, `状态不好`: English words need a space; a verb without
            # arguments is a whole word.
            continue
        elif rest[0] in CN_CHARS:
            # `刀五号` is a command, `杀一个人吧` in the killers' room is talk.
            try:
                if _number(s, end) is None:
                    continue
            except _Fail:
                continue
        elif not (rest[0].isascii() and rest[0].isdigit()) and rest[0] != "号" \
                and not rest.startswith(ABSTAIN):
            continue  # 救命, 投票率 …
        if not spec.takes_args and _skip(s, end) < len(s):
            return None  # `过 一会儿`: a verb without arguments, followed by talk
        return spec, end
    return None


def _split_prefix(s: str) -> tuple[str | None, str]:
    m = _PREFIX.match(s)
    if not m:
        return None, s
    return m.group(1).upper(), s[_skip(s, m.end()):]


def _error(spec: VerbSpec, alias: str, fail: _Fail | None) -> ParseError:
    if fail is not None and fail.reason:
        problem = MESSAGES[fail.reason].format(word=fail.word, limit=MAX_TEXT)
    else:
        problem = MESSAGES["malformed"].format(alias=alias)
    lines = MESSAGES["usage_separator"].join(f.usage for f in spec.forms)
    return ParseError(spec.key, problem + MESSAGES["right_form"].format(usage=lines))


def _scan(text: str) -> tuple[Parsed, str, int | None] | None:
    """Parse, also giving the prepared text and where a free-text argument starts."""
    if len(text) > MAX_LINE:
        head = _prepare(text[:HEAD])
        found = _verb(_split_prefix(head)[1])
        if found is None:
            return None  # a long post pasted into a room is talk, not a broken command
        raise ParseError(found[0].key, MESSAGES["too_long"].format(limit=MAX_LINE))
    s = _prepare(text)
    game, body = _split_prefix(s)
    found = _verb(body)
    if found is None:
        return None
    spec, end = found
    offset = len(s) - len(body)
    first: _Fail | None = None
    for form in spec.forms:
        try:
            acc, text_at = _match(spec, form, body, end)
        except _Fail as exc:
            if first is None or (exc.reason and not first.reason):
                first = exc
            continue
        times = acc.times + [None, None]
        parsed = Parsed(verb=spec.key, seats=tuple(acc.seats), abstain=acc.abstain,
                        time=times[0], time2=times[1], text=acc.text, words=tuple(acc.words),
                        mode=acc.mode, count=acc.count, game=game, who=form.who)
        return parsed, s, None if text_at is None else text_at + offset
    raise _error(spec, body[:end], first)


def parse(text: str) -> Parsed | None:
    """The command in `text`; None if it is not a command (no known verb at its start).
    Raises ParseError, and nothing else, for a known verb with malformed arguments."""
    if not isinstance(text, str):
        return None
    found = _scan(text)
    return found[0] if found else None


def _tidy(s: str) -> str:
    """Words separated by single spaces, punctuation around them dropped (`?` kept alone);
    punctuation that can sit inside a word (option keys, times, codes) splits nothing."""
    spaced = "".join(" " if _is_space(ch) or (_is_punct(ch) and ch not in _INNER) else ch
                     for ch in s)
    words = []
    for raw in spaced.split():
        word = raw.lstrip("".join(c for c in raw if _is_punct(c) and c != "#"))
        while word and _is_punct(word[-1]):
            word = word[:-1]
        words.append(word or ("?" if "?" in raw else ""))
    return " ".join(w for w in words if w)


def normalize(text: str) -> str:
    """NFKC, stripped, single spaces, punctuation around words dropped; the text of 遗言 and
    理由 is kept as written (NFKC and stripped only)."""
    s = unicodedata.normalize("NFKC", text)
    try:
        found = _scan(text)
    except ParseError:
        found = None
    if found is None or found[2] is None:
        return _tidy(s)
    _, prepared, text_at = found
    return f"{_tidy(prepared[:text_at])} {prepared[text_at:].strip()}"


# ---- pieces shared with the forum vote reader (bot/forum/posts.py) ------------------------
def prepare(text: str) -> str:
    """NFKC, surrounding spaces and punctuation stripped (as a command is read)."""
    return _prepare(text)


def skip_separators(s: str, i: int) -> int:
    """The index of the first character at or after i that is no space or punctuation."""
    return _skip(s, i)


def seat_at(s: str, i: int) -> tuple[int, int, bool] | None:
    """A seat number at s[i:] written as in chat (5, 5号, 五号, 十二): (value, end, whether
    号 was written); None if there is none or it is no readable seat."""
    try:
        got = _number(s, i)
    except _Fail:
        return None
    if got is None:
        return None
    value, end = got
    return value, end, s[i:end].endswith("号")

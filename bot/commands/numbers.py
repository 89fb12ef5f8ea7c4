"""Seat numbers as players write them (CHAT.md "Writing numbers and commands"): 5, 5号, 五, 五号,
十二, 二十, 两; full-width digits arrive as ASCII after NFKC. Only 0..99."""

from __future__ import annotations

import re
import unicodedata

DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
          "七": 7, "八": 8, "九": 9}
# Characters that start a Chinese numeral; 百/千/万 are included so that 一百 is read as one
# (too large) number rather than 一 followed by junk.
CN_CHARS = "".join(DIGITS) + "十百千万"
SEAT_MAX = 99

# A number-looking run: ASCII digits or Chinese numeral characters, then an optional 号.
# Only ASCII digits count: NFKC maps full-width digits, and str.isdigit would let in
# other scripts' digits (٥, ５ before NFKC) that nobody means as a seat.
NUMBER_RUN = re.compile(f"(?:([0-9]+)|([{CN_CHARS}]+))(号)?")
# Signs a number may carry after NFKC (which maps the full-width ＋ and － to + and -).
SIGNS = "+-\u2212\u2010\u2011"


def signed(s: str, i: int) -> bool:
    """Whether the number at s[i:] carries a sign: `-3`, `刀-3`, `+3`; not `3-5` (a dash
    between two numbers separates them)."""
    if i == 0 or s[i - 1] not in SIGNS:
        return False
    before = s[i - 2] if i >= 2 else ""
    return not before or not (before.isascii() and before.isdigit() or before in CN_CHARS
                              or before == "号")


def chinese_number(word: str) -> int | None:
    """十二 -> 12, 二十 -> 20, 两 -> 2, 一十五 -> 15; None unless a well-formed 0..99."""
    if len(word) == 1:
        if word in DIGITS:
            return DIGITS[word]
        return 10 if word == "十" else None
    tens, sep, ones = word.partition("十")
    if not sep or len(tens) > 1 or len(ones) > 1:
        return None
    # 两 stands alone (两号); 两十 / 十两 are not how anyone writes 20 / 12.
    if tens in ("零", "〇", "两") or ones in ("零", "〇", "两"):
        return None
    t = DIGITS.get(tens, 1 if tens == "" else None)
    o = DIGITS.get(ones, 0 if ones == "" else None)
    if t is None or o is None:
        return None
    return t * 10 + o


def number_value(digits: str | None, chinese: str | None) -> int | None:
    """The value of a NUMBER_RUN match's groups, None if it is not a number 0..99."""
    if digits is not None:
        return int(digits) if len(digits) <= 2 else None
    if chinese is not None:
        return chinese_number(chinese)
    return None


def seat_number(word: str) -> int | None:
    """A whole word as a seat number (5, ５, 5号, 五号, 十二), or None."""
    m = NUMBER_RUN.fullmatch(unicodedata.normalize("NFKC", word.strip()))
    return number_value(m.group(1), m.group(2)) if m else None

"""Issue 13 (an outside probe): seeds, message ids, input bounds and who may send what.

Each test here failed on 819e52d: the seed was `game-id + creation second`, a console message
id repeated across runs (and the inbox took it for a repeat), a 65-character game id or NaN in
an option reached PostgreSQL, and any sender could act for any seat or as the judge.
"""

from __future__ import annotations

import io
import math
import re
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy import select
from storehelp import at, classic_game

from bot.chat.clocked import run
from bot.commands.parse import ParseError, parse
from bot.service import MessageIdReused, Service, new_seed
from bot.store import migrate
from bot.store.codec import decode
from bot.store.models import ChatMessage, Game, InboxMessage, OutboxRow
from engine.commands import Act, JudgeCard, JudgeExtend, Tick, Vote
from engine.options import OptionError

# 12:00 in Shanghai, years ahead, on the console's virtual clock: day 1 opens tomorrow, so no
# deadline falls due while these tests talk to a game.
NOON = "2099-03-01 12:00"
JUDGE = "法官"


def _console(url: str, lines: str) -> str:
    """One run of the chat console (`wolfjudge console --clock NOON`) on `lines`."""
    out = io.StringIO()
    service = Service(url)
    try:
        run(service, io.StringIO(lines), out, judges=[JUDGE], clock=NOON,
            time_zone="Asia/Shanghai")
    finally:
        service.close()
    return out.getvalue()


def _dealt(url: str, extra: str = "") -> tuple[str, str]:
    """A judge makes a classic game, twelve contacts join, the judge starts it; (code, output)."""
    made = _console(url, f"{JUDGE}: 新游戏 经典\n")
    m = re.search(r"游戏码 ([A-Z0-9]{4,8})", made)
    assert m, made
    code = m.group(1)
    joins = "".join(f"p{n}: 报名 {code} 马甲{n}\n" for n in range(1, 13))
    return code, made + _console(url, joins + f"{JUDGE}: 开始\n" + extra)


def seed_of(service: Service, game_id: str) -> str:
    with service.db.read() as s:
        game = s.get(Game, game_id)
        assert game is not None
        return decode(game.params)["seed"]


# 1. seeds -------------------------------------------------------------------------------------

def test_seeds_come_from_the_os_csprng_not_from_name_or_time(tmp_path: Path) -> None:
    seeds: list[str] = []
    for n in range(2):  # started by chat at the same virtual minute, on two databases
        url = f"sqlite:///{tmp_path / f'db{n}.db'}"
        migrate(url)
        code, _ = _dealt(url)
        service = Service(url)
        seeds.append(seed_of(service, code))
        service.close()
    for n in range(2):  # the same game id and minute, straight through the service
        url = f"sqlite:///{tmp_path / f'svc{n}.db'}"
        migrate(url)
        service = Service(url)
        classic_game(service, seed=None, now=datetime(2099, 3, 1, 12, 0))
        seeds.append(seed_of(service, "g1"))
        service.close()
    assert len(set(seeds)) == 4
    a, b = seeds[2:]
    for seed in seeds:
        assert len(seed) == 64 and int(seed, 16) >= 0  # 256 bits, hex
    # Not even a shared prefix: nothing of the seed is derived from what the two share. (No
    # substring test for the year or the codes: four hex digits turn up in a random 64-digit
    # seed about once in a thousand; what the seed is made of is checked exactly below.)
    assert a[:8] != b[:8]
    assert len({new_seed() for _ in range(100)}) == 100


def test_a_seed_is_the_csprng_output_itself(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored seed is what the OS CSPRNG gave, untouched: nothing of the game's name, code
    or time is mixed in."""
    drawn: list[int] = []

    def token_hex(nbytes: int) -> str:
        drawn.append(nbytes)
        return "ab" * nbytes

    monkeypatch.setattr("bot.ids.secrets.token_hex", token_hex)
    url = f"sqlite:///{tmp_path / 'db.db'}"
    migrate(url)
    service = Service(url)
    try:
        classic_game(service, seed=None, now=datetime(2099, 3, 1, 12, 0))
        assert seed_of(service, "g1") == "ab" * 32
    finally:
        service.close()
    assert drawn == [32]


def test_created_game_without_a_seed_draws_one(service: Service) -> None:
    out = classic_game(service, seed=None)
    assert len(seed_of(service, "g1")) == 64
    assert classic_game(service, seed=None).duplicate  # a retried creation is a no-op
    assert out.state is not None and out.state.seed == seed_of(service, "g1")


# 2. message ids -------------------------------------------------------------------------------

def test_console_runs_never_reuse_message_ids(db_url: str) -> None:
    """The probe: a yellow card for seat 4, then in a second run one for seat 9; the second
    was taken for a repeat of the first (the same message id) and seat 9 never got it."""
    code, _ = _dealt(db_url, f"{JUDGE}: 黄牌 4\n")
    second = _console(db_url, f"{JUDGE}: 黄牌 9\n")
    assert f"【{code}】法官给 9号 黄牌" in second  # the judge's answer: applied
    service = Service(db_url)
    try:
        state = service.state(code)
        assert state.seat(9).yellow == 1 and state.seat(4).yellow == 1
        with service.db.read() as s:
            ids = list(s.scalars(select(InboxMessage.msg_id)))
            chat = list(s.scalars(select(ChatMessage.msg_id)))
        assert len(ids) == len(set(ids)) == 2
        # Every console line is a message of its own: 新游戏, 12 报名, 开始 and the two cards.
        assert len(chat) == len(set(chat)) == 16
    finally:
        service.close()


def test_a_reused_id_with_another_command_is_not_taken_for_a_repeat(service: Service) -> None:
    classic_game(service)
    first = service.submit("g1", JudgeCard(seat=4, color="yellow"), now=at(1, 10), msg_id="m1")
    assert first.accepted
    with pytest.raises(MessageIdReused):
        service.submit("g1", JudgeCard(seat=9, color="yellow"), now=at(1, 10), msg_id="m1")
    assert service.state("g1").seat(9).yellow == 0
    # The same message again is a true duplicate, and says so.
    again = service.submit("g1", JudgeCard(seat=4, color="yellow"), now=at(1, 10), msg_id="m1")
    assert again.duplicate and again.version == first.version
    assert service.state("g1").seat(4).yellow == 1


def test_an_overlong_message_id_is_stored_as_its_digest(service: Service) -> None:
    classic_game(service)
    long_id = "x" * 500
    first = service.submit("g1", JudgeCard(seat=4, color="yellow"), now=at(1, 10),
                           msg_id=long_id)
    again = service.submit("g1", JudgeCard(seat=4, color="yellow"), now=at(1, 10),
                           msg_id=long_id)
    assert first.accepted and again.duplicate


# 4. input bounds ------------------------------------------------------------------------------

def test_game_ids_must_fit_and_be_no_path(service: Service) -> None:
    for bad in ("g" * 65, "../../x", "a/b", "", " g1", "g1\n"):
        with pytest.raises(ValueError, match="game id"):
            classic_game(service, bad)
    classic_game(service, "g" * 64)
    with pytest.raises(LookupError):
        service.state("g" * 65)


def test_options_refuse_nan_nesting_and_huge_values(service: Service) -> None:
    for options in ({"cards.yellow_to_red": math.nan}, {"cards.yellow_to_red": math.inf},
                    {"check.no_unlost_camp": "x" * 20_000_000},
                    {"check.no_unlost_camp": {"a": [[[]]]}},
                    {f"k{n}": 1 for n in range(300)}):
        with pytest.raises(OptionError):
            classic_game(service, options=options)
    assert service.game_ids() == []


def test_commands_are_parsed_strictly() -> None:
    from bot.service import COMMAND

    for bad in ({"kind": "act", "seat": True, "skill": "see", "targets": [1]},
                {"kind": "act", "seat": "+3", "skill": "see"},
                {"kind": "act", "seat": 4, "skill": "see", "options": {"m": math.nan}},
                {"kind": "act", "seat": 4, "skill": "see", "options": {"m": [[[[]]]]}},
                {"kind": "act", "seat": 4, "skill": "see", "targets": list(range(1000))},
                {"kind": "lastwords", "seat": 4, "text": "话" * 10_000},
                {"kind": "vote", "seat": 4, "target": 2, "extra": 1}):
        with pytest.raises(ValidationError):
            COMMAND.validate_python(bad)
    nested = '{"kind":"act","seat":1,"skill":"see","options":{"a":' + "[" * 1000 + "]" * 1000
    with pytest.raises(ValidationError):
        COMMAND.validate_json(nested + "}}", strict=True)
    # Chat commands: a seat number is 1-99 written as a number, nothing else.
    for text in ("投 1_1", "投 +3", "投 true", "投 1 2 3", "刀 3.5", "验 100"):
        with pytest.raises(ParseError):
            parse(text)


def test_console_bounds_lines_and_texts(db_url: str) -> None:
    code, _ = _dealt(db_url)
    player = "p1"
    out = _console(db_url, f"{player}: 遗言 " + "话" * 5000 + "\n"  # over the bot's 4096
                   + f"{player}: 遗言 " + "话" * 9000 + "\n"  # over the console's line bound
                   + f"{player}: 投 1_1\n" + f"{player}:" + "[" * 1000 + "]" * 1000 + "\n"
                   + "no colon here\n" + "/echo end\n")
    assert "# ? line too long" in out and "# ? write NAME: TEXT" in out
    assert out.rstrip().endswith("# end")  # the console went on after each
    replies = [line for line in out.splitlines() if line.startswith(f"→ {player}: ")]
    assert len(replies) == 3  # the overlong text, the bad seat, the bracket chatter
    service = Service(db_url)
    try:
        assert service.state(code).version == 0  # nothing applied
    finally:
        service.close()


# 5. who may send what -------------------------------------------------------------------------

def _replies(service: Service) -> list[tuple[str | None, str]]:
    with service.db.read() as s:
        return [(r.address, r.text) for r in s.scalars(
            select(OutboxRow).where(OutboxRow.seq.is_(None)).order_by(OutboxRow.id))]


def test_a_player_acts_only_for_their_own_seat(service: Service) -> None:
    """The probe: a villager's contact sent the seer's `see 1` and got the seer's result."""
    classic_game(service)
    service.advance("g1", at(1, 21, 5))  # night 1 (seat 4 is the seer, seat 8 a villager)
    before = service.state("g1")
    out = service.submit("g1", Act(seat=4, skill="see", targets=(1,)), now=at(1, 21, 10),
                         msg_id="m1", sender="wx-g1-8")
    assert out.status == "rejected" and out.rejection is not None
    assert out.rejection.code == "not_permitted"
    assert service.state("g1").model_dump() == before.model_dump()
    # The same refusal, word for word, whatever the seat: it tells nothing about roles.
    other = service.submit("g1", Act(seat=2, skill="see", targets=(1,)), now=at(1, 21, 10),
                           msg_id="m2", sender="wx-g1-8")
    assert other.rejection == out.rejection
    (a1, t1), (a2, t2) = _replies(service)
    assert a1 == a2 == "wx-g1-8" and t1 == t2 and "预言家" not in t1
    # Logged: the attempt is in the inbox, refused.
    with service.db.read() as s:
        row = s.get(InboxMessage, ("g1", "m1"))
        assert row is not None and row.outcome == "rejected" and row.sender == "wx-g1-8"
    # The seer's own contact may.
    ok = service.submit("g1", Act(seat=4, skill="see", targets=(1,)), now=at(1, 21, 10),
                        msg_id="m3", sender="wx-g1-4")
    assert ok.accepted


def test_judge_commands_need_judge_rights(db_url: str) -> None:
    service = Service(db_url, judges={"wx-boss"})
    try:
        classic_game(service)
        for i, sender in enumerate(("wx-g1-3", "stranger", "room-g1")):
            out = service.submit("g1", JudgeCard(seat=5, color="red"), now=at(1, 10),
                                 msg_id=f"j{i}", sender=sender)
            assert out.rejection is not None and out.rejection.code == "not_permitted"
        assert not service.state("g1").seat(5).red
        assert service.submit("g1", JudgeCard(seat=5, color="yellow"), now=at(1, 10),
                              msg_id="j10", sender="wx-judge").accepted  # the game's judge
        assert service.submit("g1", JudgeCard(seat=6, color="yellow"), now=at(1, 10),
                              msg_id="j11", sender="wx-boss").accepted  # a bot-wide judge
        far = service.submit("g1", JudgeExtend(seat=7, at=datetime(9999, 12, 31, 23, 59)),
                             now=at(1, 10), msg_id="j12", sender="wx-judge")
        assert far.rejection is not None and far.rejection.code == "time_too_far"
    finally:
        service.close()


def test_no_chat_sends_a_tick_and_corrections_are_the_judges(service: Service) -> None:
    classic_game(service)
    service.advance("g1", at(1, 10))
    dl = service.state("g1").next_deadline()
    assert dl is not None
    tick = service.submit("g1", Tick(deadline_id=dl.id), now=at(1, 23), msg_id="t",
                          sender="wx-g1-1")
    assert tick.rejection is not None and tick.rejection.code == "not_permitted"
    assert service.submit("g1", Vote(seat=3, target=5), now=at(1, 10), msg_id="v1",
                          sender="wx-g1-3").accepted
    for mode in ("correct", "void"):
        out = service.submit("g1", Vote(seat=3, mode=mode, target=6), now=at(1, 10, 5),
                             msg_id=f"v-{mode}", sender="wx-g1-3")
        assert out.rejection is not None and out.rejection.code == "not_permitted"
    assert service.submit("g1", Vote(seat=3, mode="request_correct", target=6),
                          now=at(1, 10, 6), msg_id="v2", sender="wx-g1-3").accepted
    # The judge enters forum votes for any seat.
    assert service.submit("g1", Vote(seat=4, target=5), now=at(1, 10, 7), msg_id="v3",
                          sender="wx-judge").accepted


def test_the_same_tick_from_two_schedulers_is_a_duplicate(service: Service) -> None:
    """Tick ids are derived from the deadline and the state version; a second scheduler that
    catches up later says another `fired_at`, and that is still the same tick."""
    classic_game(service)
    dl = service.state("g1").next_deadline()
    assert dl is not None
    first = service.submit("g1", Tick(deadline_id=dl.id), now=dl.due, msg_id="tick-x")
    again = service.submit("g1", Tick(deadline_id=dl.id, fired_at=dl.due.replace(hour=23)),
                           now=dl.due, msg_id="tick-x")
    assert again.duplicate and again.version == first.version


"""A table of QQ people playing whole games through the real bot over OneBot v11: the bot
(ClockedBot on a virtual clock, as `wolfjudge run --clock` builds it) with the QQ transport,
connected over a real WebSocket to our fake NapCat (onebotfake.py), where twelve players and
a judge are QQ friends of the bot.

The players decide as the demo's scripted players do (bot/chat/demo.py: from what reached their
own seat), but every message goes through QQ: a DM or a group line on the fake, handed by the
transport to the bot, answered through send_private_msg/send_group_msg. The judge does what a
QQ judge does: makes each group the bot asks for (the members it names, the bot added, an
admin or not), binds it with `绑定` in the group, and removes a member by hand when the bot
cannot. The clock moves only by the driver. After each step the driver waits until the bot has
handled the message and sent all it caused (the transport sends inside the handling: one
thread, no deliverer), and records what each step sent for the message economy.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import random
import re
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, date
from typing import Any

from onebotfake import FakeOneBot, Sent

from bot.chat.clocked import ClockedBot, VirtualClock
from bot.chat.demo import JUDGE, RULESET_WORDS, START, TZ, Demo, _Tee
from bot.chat.live import tell_capabilities, tell_judges
from bot.chat.reach import Reach
from bot.gametime import instant_of, zone
from bot.service import Service
from bot.store import migrate
from bot.transport.guard import Guard, GuardSettings
from bot.transport.onebot import OneBotTransport

JUDGE_QQ = "20000"
PLAYER_QQ = [str(10001 + i) for i in range(12)]
OUTSIDERS = ["40001", "40002", "40003"]  # the community group's other members
COMMUNITY = "700000"
SETTLE = 30.0
HOSTILE_LAST_WORDS = "遗言 [CQ:at,qq=all] 我是好人 [CQ:image,file=http://x/y.jpg] &#91;CQ:face&#93;"
ASK = re.compile(r"【(\w+)】请手动建立QQ群“(\w+)”，成员：([^，。]*)(，以及法官)?，并把机器人")
KICK = re.compile(r"【(\w+)】机器人不是(\w+)这个QQ群的管理员，移不出 ([^：]+)：")


class QQTable(Demo):
    def __init__(self, ruleset: str, seed: int, fake: FakeOneBot, db_url: str,
                 options: Sequence[str] = (), *, admin_in: Sequence[str] = ("狼群", "公告群"),
                 hostile_last_words: bool = False, guard: GuardSettings | None = None) -> None:
        """`admin_in`: the rooms whose QQ group the judge makes the bot an admin of (elsewhere
        the bot is a plain member and asks the judge to remove who goes out)."""
        self.ruleset = ruleset
        self.options = list(options)
        self.rng = random.Random(seed)
        self.seed = seed
        self.out = _Tee(io.StringIO())
        self.fake = fake
        self.db_url = db_url
        self.admin_in = set(admin_in)
        self.hostile = hostile_last_words
        self.guard = guard  # the risk guard's limits (None: no guard, as the games' tests)
        migrate(db_url)
        self.clock = VirtualClock(instant_of(START, zone(TZ)).astimezone(UTC))
        self.names = [f"玩家{i}" for i in range(1, 13)]
        self.qq = {JUDGE: JUDGE_QQ, **dict(zip(self.names, PLAYER_QQ, strict=True))}
        fake.user(JUDGE_QQ, "法官")
        for name, qq in zip(self.names, PLAYER_QQ, strict=True):
            fake.user(qq, name)
        for qq in OUTSIDERS:
            fake.user(qq, "群友")
        fake.group(COMMUNITY, "狼人杀社区", [JUDGE_QQ, *PLAYER_QQ, *OUTSIDERS], bot="admin",
                   owner=JUDGE_QQ)
        self.code = ""
        self.done: set[tuple[Any, ...]] = set()
        self.checked: dict[int, set[int]] = {}
        self.steps: list[list[Sent]] = []  # what each step (a message, a clock move) sent
        self.groups = itertools.count(800001)
        self.made: dict[str, str] = {}  # room name (CODE狼群) -> QQ group
        self.bot_running = False
        self.read_judge = 0  # the judge's DMs read so far
        self.start_bot()

    # the bot -----------------------------------------------------------------------------------
    def start_bot(self) -> None:
        """The bot as `wolfjudge run --clock` builds it (bot/chat/live.py), on the QQ channel."""
        self.service = Service(self.db_url, judges=[JUDGE_QQ])
        self.transport = OneBotTransport(
            self.fake.url, self.fake.token, reconnect_min=0.05, reconnect_max=0.3, timeout=10,
            guard=Guard(self.guard) if self.guard is not None else None)
        self.console = ClockedBot(self.service, self.out, judges=[JUDGE_QQ], clock=self.clock,
                                  time_zone=TZ, export_dir=tempfile.mkdtemp(prefix="wj-qq-"),
                                  transport=self.transport)
        bot = self.console.bot
        game_seed = hashlib.sha256(f"wolfjudge-qq|{self.ruleset}|{self.seed}".encode()
                                   ).hexdigest()
        bot.seeds = lambda: game_seed
        bot.codes = lambda: f"QQ{self.seed % 100:02d}{self.ruleset[:2].upper()}"
        reach = Reach(bot, lambda: date(2026, 12, 1), me=lambda: self.transport.self_id)
        t = self.transport
        t.handler = self.console.incoming
        t.on_reconnect = tell_judges(bot, [JUDGE_QQ])
        t.on_capabilities = tell_capabilities(bot, [JUDGE_QQ], lambda: date(2026, 12, 1))
        t.on_friend_request = reach.friend_request
        t.on_unreachable = reach.unreachable
        t.on_guarded = reach.guarded
        self.console.align_clock()
        t.start()
        assert t.wait_ready(SETTLE), "the bot did not log in to the fake NapCat"
        assert t.wait_settled(SETTLE)
        self.bot_running = True

    def stop_bot(self) -> None:
        self.transport.halt()
        self.transport.stop()
        self.service.close()
        self.bot_running = False

    # talking -----------------------------------------------------------------------------------
    def say(self, name: str, text: str, room: str | None = None) -> str:
        """`name` (a player's name, 法官, or a QQ number) sends `text` by DM or in the QQ
        group `room`; the outcome, once the bot has handled it and sent all it caused."""
        if self.hostile and text.startswith("遗言 "):
            text = HOSTILE_LAST_WORDS
        qq = self.qq.get(name, name)
        before = len(self.fake.sent)
        mid = self.fake.dm(qq, text) if room is None else self.fake.say(qq, room, text)
        self.settle(mid)
        self.steps.append(self.fake.sent[before:])
        self.judge_acts()
        return self.console.bot.chats.outcome(mid) or "handled"

    def settle(self, msg_id: str | None = None) -> None:
        end = time.monotonic() + SETTLE
        chats = self.console.bot.chats
        while msg_id is not None and not chats.sender(None, msg_key=msg_id).handled:
            assert time.monotonic() < end, f"message {msg_id} not handled"
            time.sleep(0.005)
        assert self.transport.wait_settled(SETTLE)

    def advance(self) -> bool:
        before = len(self.fake.sent)
        moved = super().advance()
        self.steps.append(self.fake.sent[before:])
        self.judge_acts()
        return moved

    # the judge's hands ---------------------------------------------------------------------
    def judge_acts(self) -> None:
        """What the bot asked the judge to do by hand since the last look: make and bind a
        group, remove a member the bot may not."""
        while (told := self.fake.dms_to(JUDGE_QQ))[self.read_judge:]:
            text = told[self.read_judge]
            self.read_judge += 1
            for line in text.split("\n"):
                if m := ASK.search(line):
                    self.make_group(m[1], m[2], m[3], bool(m[4]))
                elif m := KICK.search(line):
                    group = self.made[f"{m[1]}{m[2]}"]
                    for seat in re.findall(r"(\d+)号", m[3]):
                        self.fake.groups[group].members.pop(self.contact(int(seat)), None)

    def make_group(self, code: str, name: str, members: str, with_judge: bool) -> None:
        room = name.removeprefix(code)
        if room == "公告群":  # the community's own group serves
            group = COMMUNITY
        else:
            seats = [int(n) for n in re.findall(r"(\d+)号", members)]
            people = [self.contact(n) for n in seats] + ([JUDGE_QQ] if with_judge else [])
            group = self.fake.group(str(next(self.groups)), name, people,
                                    bot="admin" if room in self.admin_in else "member",
                                    owner=JUDGE_QQ if with_judge else None)
        self.made[name] = group
        self.say(JUDGE, f"绑定 {code} {room}", group)

    # the game ----------------------------------------------------------------------------------
    def run(self) -> str:
        self.deal()
        return self.play()

    def deal(self) -> None:
        """The judge's 新游戏 (votes by DM), the twelve players' 报名, 开始: the game dealt,
        its code known."""
        kind = RULESET_WORDS[self.ruleset]
        self.say(JUDGE, " ".join(["新游戏", kind, "votes.channel=dm", *self.options]))
        m = re.search(r"游戏码 ([A-Z0-9]{4,8})", "\n".join(self.fake.dms_to(JUDGE_QQ)))
        assert m, self.fake.dms_to(JUDGE_QQ)
        self.code = m.group(1)
        for i, name in enumerate(self.names, 1):
            self.say(name, f"报名 {self.code} 马甲{i:02d}")
        self.say(JUDGE, "开始")

    def play(self, max_steps: int = 5000, until: Any = None) -> str:
        """Play on until the end (or until `until(state)` holds after a step)."""
        for _ in range(max_steps):
            state = self.service.state(self.code)
            if state.over or (until is not None and until(state)):
                break
            self.turn(state)
            state = self.service.state(self.code)
            if state.over or (until is not None and until(state)) or not self.advance():
                break
        return self.service.state(self.code).winner or "none"

    def room_of_group(self, group: str) -> str | None:
        return self.console.bot.chats.sender(None, group).room_group

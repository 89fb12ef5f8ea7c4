"""`wolfjudge demo`: a whole game through the real chat layer, printed as a console transcript.

A judge creates the game, twelve scripted players join and are dealt, then play it to the end
on a virtual clock: night actions typed in Chinese (the killers in their room), votes by DM,
last words, handovers; the judge posts the tally and the day's 公示. Every line is printed in
the console protocol (inputs as `NAME: TEXT`, clock moves as `/clock …`), so a transcript can
be fed back to `wolfjudge console --clock`.

The scripted players play plausibly and only on what their seat knows: each decides from the
events that reached its own seat (its role DM, prompts, results, its rooms, public posts) and
from the public phase and clock, never from another seat's role.
"""

from __future__ import annotations

import hashlib
import random
import re
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from bot.chat.clocked import ClockedBot, VirtualClock
from bot.gametime import instant_of, wall_clock, zone
from bot.service import Service
from bot.store import migrate
from bot.transport import Incoming
from engine.events import Event

JUDGE = "法官"
TZ = "Asia/Shanghai"
START = datetime(2026, 12, 1, 7, 30)
LAST_WORDS = ["我是好人，大家看清场上局势。", "过，祝好人胜利。", "请相信我的发言，重点看后置位。"]
RULESET_WORDS = {"classic": "经典", "anomaly": "异常", "standard": "标准"}
# Check results that call the target a wolf (classic <非村>, the standard board's words).
WOLF_LABELS = ("狼人", "查杀", "狼人阵营")
MAX_STEPS = 5000


@dataclass
class Seen:
    """What one seat knows: the events that reached it, in order."""

    seat: int
    events: list[Event] = field(default_factory=list)

    def of(self, *types: str) -> list[Event]:
        return [e for e in self.events if e.type in types]

    def last(self, *types: str) -> Event | None:
        found = self.of(*types)
        return found[-1] if found else None


class Demo:
    def __init__(self, ruleset: str, seed: int, out: TextIO, db_url: str,
                 options: Sequence[str] = ()) -> None:
        """`options`: more `key=value` words for `新游戏` (`public.channel=room`)."""
        self.ruleset = ruleset
        self.options = list(options)
        self.rng = random.Random(seed)
        self.out = _Tee(out)
        migrate(db_url)
        self.service = Service(db_url)
        self.clock = VirtualClock(instant_of(START, zone(TZ)).astimezone(UTC))
        self.console = ClockedBot(self.service, self.out, judges=[JUDGE], clock=self.clock,
                               time_zone=TZ, export_dir=tempfile.mkdtemp(prefix="wj-export-"))
        # A demo replays: `--seed` fixes the deal and the code too (never do this for a real
        # game, whose seed must be secret).
        game_seed = hashlib.sha256(f"wolfjudge-demo|{ruleset}|{seed}".encode()).hexdigest()
        self.console.bot.seeds = lambda: game_seed
        self.console.bot.codes = lambda: f"DEMO{seed % 100:02d}"
        self.names = [f"玩家{i}" for i in range(1, 13)]
        self.code = ""
        self.done: set[tuple[Any, ...]] = set()
        self.checked: dict[int, set[int]] = {}

    # talking -----------------------------------------------------------------------------------
    def say(self, name: str, text: str, room: str | None = None) -> str:
        """Send one line as `name` (echoed as the console would read it); its outcome."""
        print(f"{name}@{room}: {text}" if room else f"{name}: {text}", file=self.out, flush=True)
        msg_id = f"demo:{uuid.uuid4().hex}"
        self.console.bot.handle(Incoming(msg_id=msg_id, sender=name, text=text,
                                         at=self.clock.now(), room=room))
        outcome = self.console.bot.chats.outcome(msg_id)
        return outcome or "handled"

    def wall(self) -> datetime:
        return wall_clock(self.clock.now(), zone(TZ))

    def advance(self) -> bool:
        """Move the clock to the game's next deadline (printed as a /clock line)."""
        state = self.service.state(self.code)
        dl = state.next_deadline()
        if dl is None:
            return False
        when = max(dl.due, self.wall())
        print(f"/clock {when:%Y-%m-%d %H:%M}", file=self.out, flush=True)
        self.console.move_to(instant_of(when, zone(TZ)))
        return True

    # what a seat knows -------------------------------------------------------------------------
    def seen(self, seat: int) -> Seen:
        out = Seen(seat)
        from bot.service import event_of
        for row in self.service.log(self.code):
            if row.kind == "event" and (row.audience.get("public")
                                        or seat in row.audience.get("seats", [])):
                out.events.append(event_of(row.body))
        return out

    def public_alive(self, seen: Seen) -> list[int]:
        """The seats not yet announced out, as the public posts tell it."""
        alive = set(range(1, 13))
        for e in seen.events:
            if e.type == "DayOpened" and isinstance(e.data.get("alive"), list):
                alive = set(e.data["alive"])
            elif e.type in ("Exiled", "RedCard") and e.data.get("seat"):
                alive.discard(e.data["seat"])
        return sorted(alive)

    def contact(self, seat: int) -> str:
        c = self.console.bot.chats.contacts(self.code).get(seat)
        assert c is not None
        return c

    def room(self, group: str) -> str | None:
        return self.console.bot.chats.room_id(self.code, group)

    # the game ----------------------------------------------------------------------------------
    def run(self) -> str:
        start = self.out.size
        kind = RULESET_WORDS[self.ruleset]
        votes = [] if any(o.startswith("votes.channel=") for o in self.options) else [
            "votes.channel=dm"]  # the players vote by DM unless the options say otherwise
        self.say(JUDGE, " ".join(["新游戏", kind, *votes, *self.options]))
        m = re.search(r"游戏码 ([A-Z0-9]{4,8})", self.out.since(start))
        if not m:
            raise RuntimeError("no game code in the reply")
        self.code = m.group(1)
        for i, name in enumerate(self.names, 1):
            self.say(name, f"报名 {self.code} 马甲{i:02d}")
        self.say(JUDGE, "开始")
        self.say(self.names[0], "帮助")
        winner = self.play_out()
        print(f"# winner: {winner}", file=self.out, flush=True)
        self.service.close()
        return winner

    def play_out(self) -> str:
        """From the start to the end: each step the seats act (`turn`), then the clock moves
        to what falls due next (`advance`). The winning camp, or "none"."""
        for _ in range(MAX_STEPS):
            state = self.service.state(self.code)
            if state.over:
                break
            self.turn(state)
            state = self.service.state(self.code)
            if state.over or not self.advance():
                break
        return self.service.state(self.code).winner or "none"

    def turn(self, state: Any) -> None:
        """Every seat does what it owes now, once."""
        phase = state.phase
        if phase.startswith("D") and ("judge-morning", phase) not in self.done:
            self.done.add(("judge-morning", phase))
            self.say(JUDGE, "公示")
        for seat in range(1, 13):
            if self.service.state(self.code).over:
                return  # the last action ended the game: nobody plays on
            st = state.seat(seat)
            seen = self.seen(seat)
            self.duties(state, seat, seen)
            if self.ruleset == "standard" and phase.startswith("D") and st.alive:
                self.standard_day(state, seat, seen)
                state = self.service.state(self.code)
                if state.phase != phase or state.over:
                    return  # a self-destruct ended the day
            if phase.startswith("D") and st.alive and ("vote", phase, seat) not in self.done \
                    and self.may_vote(state, seat):
                self.done.add(("vote", phase, seat))
                self.vote(seat, seen)
        if phase.startswith("D") and ("tally", phase) not in self.done and not (
                self.service.state(self.code).over):
            self.done.add(("tally", phase))
            self.say(JUDGE, "票型")

    def duties(self, state: Any, seat: int, seen: Seen) -> None:
        name = self.contact(seat)
        alive = self.public_alive(seen)
        others = [n for n in alive if n != seat]
        night = state.night
        for slot in (night.slots.values() if night and not night.resolved else []):
            key = ("slot", state.phase, slot.key)
            if seat not in slot.seats or slot.final or slot.expired or key in self.done:
                continue
            if slot.seats and seat != min(n for n in slot.seats if state.seat(n).alive):
                continue  # one killer speaks for the room
            self.done.add(key)
            self.night_action(slot.key, seat, name, seen, others)
        for dl in state.deadlines:
            key = ("duty", dl.id, seat)
            if seat not in dl.seats or key in self.done:
                continue
            if dl.kind == "setup":
                self.done.add(key)
                pair = self.rng.sample(others, 2)
                self.say(name, f"连 {pair[0]} {pair[1]}")
            elif dl.kind == "handover":
                self.done.add(key)
                if self.ruleset == "standard" and self.rng.random() < 0.2:
                    self.say(name, "撕警徽")
                else:
                    self.say(name, f"移交 {self.rng.choice(others)}")
            elif dl.kind == "lastwords":
                self.done.add(key)
                if self.rng.random() < 0.7:
                    self.say(name, f"遗言 {self.rng.choice(LAST_WORDS)}")
            elif dl.kind == "hunter":
                self.done.add(key)
                shoot = "粉碎" if self.ruleset == "anomaly" else "开枪"
                self.say(name, f"{shoot} {self.rng.choice(others)}")

    def night_action(self, key: str, seat: int, name: str, seen: Seen, others: list[int]
                     ) -> None:
        mates = set()
        for e in seen.of("GroupFormed"):
            mates |= set(e.data.get("members", []))
        base = key.split(":")[0]
        if base == "kill":
            targets = [n for n in others if n not in mates] or others
            room = self.room("wolves")
            self.say(name, f"刀 {self.rng.choice(targets)}", room)
            self.say(name, "锁定", room)
        elif base == "see":
            done = self.checked.setdefault(seat, set())
            fresh = [n for n in others if n not in done] or others
            target = self.rng.choice(fresh)
            done.add(target)
            self.say(name, f"验 {target}")
        elif base == "guard" and self.ruleset != "anomaly":
            for target in self.rng.sample(others + [seat], min(3, len(others) + 1)):
                if self.say(name, f"守 {target}") == "accepted":
                    return
            self.say(name, "空守")
        elif base == "witch" and self.ruleset != "anomaly":
            told = seen.last("Tongling")
            used = {e.data.get("skill") for e in seen.of("ActionRecorded")}
            if told is not None and told.data.get("target") and "save" not in used and (
                    self.rng.random() < 0.6) and self.say(name, "救") == "accepted":
                return
            if "poison" not in used and self.rng.random() < 0.3 and self.say(
                    name, f"毒 {self.rng.choice(others)}") == "accepted":
                return
            self.say(name, "过")
        elif base == "head":
            target = self.rng.choice(others)
            for text in (f"感染 {target}", f"感染 {target} 1", "过"):
                if self.say(name, text) == "accepted":
                    return
        elif base == "guard":
            if self.say(name, f"防火墙 {self.rng.choice(others)}") != "accepted":
                self.say(name, "过")
        else:  # the anomaly witch, a derivative's 过载: mostly pass
            self.say(name, "过")

    def vote(self, seat: int, seen: Seen) -> None:
        name = self.contact(seat)
        alive = [n for n in self.public_alive(seen) if n != seat]
        if not alive:
            return
        mates = set()
        for e in seen.of("GroupFormed"):
            mates |= set(e.data.get("members", []))
        suspects = [e.data.get("target") for e in seen.of("SeerResult")
                    if ("非" in str(e.data.get("label", ""))
                        or e.data.get("label") in WOLF_LABELS) and e.data.get("target") in alive]
        candidates = self.candidates(seen)
        if candidates is not None:  # the standard board's day-1 election
            alive = [n for n in candidates if n != seat]
            suspects = [n for n in suspects if n in alive]
            if not alive:
                return
        if suspects:
            target = suspects[-1]
        else:
            pool = [n for n in alive if n not in mates] or alive
            target = self.rng.choice(pool)
        if self.rng.random() < 0.1:
            self.say(name, "弃权")
        else:
            self.say(name, f"投 {target}")


    # the standard board's day: the election, self-destruct -------------------------------------
    def election(self, state: Any) -> dict[str, Any] | None:
        election = state.data.get("election") if self.ruleset == "standard" else None
        return election if election and election["phase"] != "done" else None

    def candidates(self, seen: Seen) -> list[int] | None:
        """The candidates as the public posts tell them, while the election is open."""
        state = self.service.state(self.code)
        if self.election(state) is None:
            return None
        stood = [e.data["seat"] for e in seen.of("SheriffCandidate")]
        gone = {e.data["seat"] for e in seen.of("SheriffWithdrew")}
        return [n for n in stood if n not in gone]

    def may_vote(self, state: Any, seat: int) -> bool:
        """On day 1 of the standard board: after the sign-up, and not as a candidate."""
        election = self.election(state)
        if election is None:
            return not (self.ruleset == "standard" and state.day == 1)
        return election["phase"] != "signup" and seat not in (
            election["candidates"] + election["withdrawn"]) and len(election["candidates"]) > 1

    def standard_day(self, state: Any, seat: int, seen: Seen) -> None:
        """Day 1: a few stand (上警), one may withdraw (退水); later days: a wolf may 自爆."""
        name = self.contact(seat)
        election = self.election(state)
        if election is not None and ("run", seat) not in self.done:
            self.done.add(("run", seat))
            if election["phase"] == "signup" and self.rng.random() < 0.25:
                self.say(name, "上警")
                return
        if election is not None and seat in election["candidates"] and election[
                "phase"] == "withdraw" and ("withdraw", seat) not in self.done:
            self.done.add(("withdraw", seat))
            if self.rng.random() < 0.2:
                self.say(name, "退水")
            return
        if state.day >= 2 and state.seat(seat).role == "wolf" and (
                "destruct", state.phase, seat) not in self.done:
            self.done.add(("destruct", state.phase, seat))
            if self.rng.random() < 0.05:
                self.say(name, "自爆")


def run_demo(*, ruleset: str = "classic", seed: int = 1, out: TextIO,
             options: Sequence[str] = ()) -> int:
    """Play one game in a temporary SQLite database; 0 if it ended with a winner."""
    with tempfile.TemporaryDirectory(prefix="wolfjudge-demo-") as tmp:
        winner = Demo(ruleset, seed, out, f"sqlite:///{Path(tmp) / 'demo.db'}",
                      options).run()
    return 0 if winner != "none" else 1


class _Tee:
    """Writes through to `out` and keeps the text, so the demo can read the bot's replies."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        self.parts.append(text)
        self.size += len(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def since(self, pos: int) -> str:
        return "".join(self.parts)[pos:]

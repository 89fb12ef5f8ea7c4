"""Whole games through the real command line: `wolfjudge console` in a subprocess, driven line
by line as a person at the terminal would (docs/spec/CHAT.md "The console transport").

The driver knows only the transcript: each player decides from the messages printed to them
(their role DM, the prompts, results, their rooms and the day posts), never from the database.
After each line it writes `/echo n` and reads until `# n`, so it knows where the output of that
line ends.
"""

from __future__ import annotations

import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.texts import camp_name, role_name, ruleset_name
from engine.ruleset import get_ruleset, ruleset_names

JUDGE = "法官"
# On the hour: the driver moves the clock by whole hours, so a day's close (21:00) and a shot
# due half an hour after it fall in different steps, and an exiled hunter answers in time.
START = "2026-12-01 07:00"
PLAYERS = 12
# Every registered ruleset plays a whole game (a new one is covered without editing this file),
# each with its own seed.
RULESETS = ruleset_names()
SEEDS = [pytest.param(ruleset, seed, id=ruleset) for seed, ruleset in enumerate(RULESETS, 1)]
CAMPS = tuple(dict.fromkeys(camp_name(r, c) for r in RULESETS for c in get_ruleset(r).camps))
LAST_WORDS = "我是好人，请看清局势。"
ROOT = Path(__file__).resolve().parents[2]
LINE_TIMEOUT = 30  # seconds for the console to answer one line (a whole game takes a few)
MAX_LINES_EACH = 200  # a driver that keeps answering the bot's answers fails, not hangs
# What a console output line may be (CHAT.md output lines, and `# …` notes).
OUTPUT_LINE = re.compile(r"→ @?[^\s:@]+: .*|[+-] @[^\s:@]+(: .*| [^\s:@]+)|  .*|#( .*)?")
# What an input line of a transcript may be: a message, a clock move (CHAT.md), and in the
# driver's own transcripts also /advance and the /echo sync markers.
INPUT_LINE = re.compile(r"[^\s:@]+(@[^\s:@]+)?: .*|/clock \d{4}-\d\d-\d\d \d\d:\d\d")
DRIVER_LINE = re.compile(rf"{INPUT_LINE.pattern}|/advance \w+|/echo .*")


@dataclass
class Message:
    """One printed message: a DM (`to` a contact), a room post (`room`), or a room change."""

    head: str  # "→", "+", "-", "#"
    to: str | None
    room: str | None
    text: str
    made: bool = False  # `+ @ROOM: A B …`: the room was created with these members


def messages(lines: list[str]) -> list[Message]:
    out: list[Message] = []
    for line in lines:
        if line.startswith("  ") and out:
            out[-1].text += "\n" + line[2:]
            continue
        assert OUTPUT_LINE.fullmatch(line), f"not a console output line: {line!r}"
        head, _, rest = line.partition(" ")
        if head == "#":
            out.append(Message("#", None, None, rest))
            continue
        where, sep, text = rest.partition(": ") if ": " in rest else rest.partition(" ")
        if where.startswith("@"):
            out.append(Message(head, None, where[1:], text, made=head == "+" and sep == ": "))
        else:
            out.append(Message(head, where, None, text))
    return out


class LineProcess:
    """A bot process driven one stdin line at a time: each line is followed by `/echo N`, and
    the stdout lines before `# N` are what the line caused (also used by tests/e2e)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.n = 0
        self.transcript: list[str] = []  # stdin lines and stdout lines, for failure messages
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def context(self) -> str:
        """What a failure message shows."""
        return "\n".join(self.transcript[-60:])

    def send(self, line: str, timeout: float = LINE_TIMEOUT) -> list[str]:
        """Write one line; the output lines it caused."""
        assert self.proc.stdin is not None
        self.n += 1
        self.transcript.append(line)
        self.proc.stdin.write(f"{line}\n/echo {self.n}\n")
        self.proc.stdin.flush()
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                got = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                raise AssertionError(f"no `# {self.n}` within {timeout:g} s after {line!r}:\n"
                                     + self.context()) from None
            if got is None:
                raise AssertionError(f"the process exited ({self.proc.poll()}) after "
                                     f"{line!r}: {out}\n" + self.context())
            if got == f"# {self.n}":
                break
            out.append(got)
        self.transcript.extend(out)
        return out


class ConsoleProcess(LineProcess):
    """`wolfjudge console` as a subprocess, one line at a time."""

    def __init__(self, db: str, cwd: Path, clock: str = START) -> None:
        env = {**os.environ, "PYTHONUTF8": "1", "PYTHONPATH": str(ROOT)}
        self.stderr = open(cwd / "stderr.txt", "ab")  # noqa: SIM115 (closed in close())
        super().__init__(subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "console", "--db", db, "--judge", JUDGE,
             "--clock", clock], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr, cwd=cwd, env=env, text=True, encoding="utf-8", bufsize=1))

    def close(self) -> int:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        while (got := self.lines.get(timeout=10)) is not None:
            self.transcript.append(got)
        self.stderr.close()
        return code


@dataclass
class Player:
    name: str
    seat: int = 0
    role: str = ""
    mates: set[int] = field(default_factory=set)  # the wolves it was told of (itself too)
    suspects: list[int] = field(default_factory=list)  # seen <非村> / 狼头 by a seer
    saved: bool = False
    out: bool = False
    voteless: bool = False  # a revealed idiot has no vote (S-IDIOT-1)


class Table:
    """The players and the judge at one console, deciding from what was printed to them."""

    def __init__(self, console: ConsoleProcess, ruleset: str, seed: int) -> None:
        self.c = console
        self.ruleset = ruleset
        self.rng = random.Random(seed)
        self.players = {f"玩家{i}": Player(f"玩家{i}") for i in range(1, 13)}
        self.code = ""
        self.alive: list[int] = list(range(1, 13))  # as the last day post told it
        self.rooms: dict[str, list[str]] = {}  # room name -> members, as printed
        self.todo: list[tuple[str, str, str | None]] = []  # (name, text, room) to send
        self.over = False
        self.sent: dict[str, int] = {}  # lines sent, per contact
        self.candidates: set[int] = set()  # the seats that stood for sheriff (上警)

    # sending -----------------------------------------------------------------------------------
    def say(self, name: str, text: str, room: str | None = None) -> list[Message]:
        line = f"{name}@{room}: {text}" if room else f"{name}: {text}"
        self.sent[name] = self.sent.get(name, 0) + 1
        assert self.sent[name] <= MAX_LINES_EACH, f"{name} keeps sending: {line!r}"
        got = messages(self.c.send(line))
        # Every command gets its answer at once: a DM to the sender, or a post in the room.
        if room is None:
            assert any(m.head == "→" and m.to == name for m in got), (line, got)
        else:
            assert any(m.head == "→" and (m.room == room or m.to == name) for m in got), (
                line, got)
        self.read(got)
        return got

    def replied(self, got: list[Message], name: str, word: str) -> bool:
        return any(m.to == name and word in m.text for m in got)

    def advance(self) -> None:
        got = messages(self.c.send("/advance 1h"))
        self.read(got)

    def flush(self) -> None:
        while self.todo and not self.over:
            name, text, room = self.todo.pop(0)
            self.say(name, text, room)

    # reading -----------------------------------------------------------------------------------
    def read(self, got: list[Message]) -> None:
        for m in got:
            if m.made and m.room:
                self.rooms[m.room] = m.text.split()
            elif m.head == "+" and m.room:
                self.rooms.setdefault(m.room, []).append(m.text)
            elif m.head == "-" and m.room and m.room in self.rooms:
                self.rooms[m.room] = [x for x in self.rooms[m.room] if x != m.text]
            elif m.head == "→" and m.room:
                for line in m.text.split("\n"):  # one post a step: its lines, in order
                    self.room_post(m.room, line)
            elif m.head == "→" and m.to in self.players:
                for line in m.text.split("\n"):  # one DM a step: its lines, in order
                    self.dm(self.players[m.to], line)
            if "游戏结束" in m.text:
                self.over = True

    def others(self, p: Player, *, avoid: set[int] | None = None) -> list[int]:
        pool = [n for n in self.alive if n != p.seat]
        return [n for n in pool if n not in (avoid or set())] or pool

    def dm(self, p: Player, text: str) -> None:
        if m := re.search(r"你的座位：(\d+)号。你的身份：(\S+?)。", text):
            p.seat, p.role = int(m[1]), m[2]
        if m := re.search(r"狼群已建立，成员：(.*)。", text):
            p.mates = {int(x) for x in re.findall(r"\d+", m[1])}
        # A check that calls the target a wolf: classic <非村>, anomaly's, the standard
        # board's words (standard.seer_words).
        if m := re.search(r"查验结果：(\d+) 号(是| <?)(非村|狼头|属性异常|狼人|查杀)", text):
            p.suspects.append(int(m[1]))
        if (m := re.search(r"存活：(.*)。", text)) and re.match(r"第\d+天讨论日开始", text):
            self.alive = [int(x) for x in re.findall(r"\d+", m[1])]
        if text.startswith("你已出局"):
            p.out = True
        if (m := re.search(r"(\d+) 号被放逐，翻牌为白痴", text)) and int(m[1]) == p.seat:
            p.voteless = True
        if m := re.match(r"(\d+) 号上警。", text):
            self.candidates.add(int(m[1]))
        if self.over:
            return
        mates = p.mates or {p.seat}
        if (re.match(r"第\d+天讨论日开始", text) and not p.out and not p.voteless
                and p.seat in self.alive):
            targets = [n for n in p.suspects if n in self.alive] or self.others(p, avoid=mates)
            self.todo.append((p.name, f"投 {self.rng.choice(targets)}", None))
        elif text.startswith("警长竞选：") and not p.out:
            # The standard board's day 1 elects a sheriff, no exile (S-SHERIFF-1): the day
            # post's line before queued no vote after all; some stand.
            self.todo = [a for a in self.todo if not (a[0] == p.name and a[1].startswith("投"))]
            if self.rng.random() < 0.3:
                self.todo.append((p.name, "上警", None))
        elif text.startswith("上警截止。警长候选人：") and p.seat not in self.candidates:
            if not p.out and (stood := [int(x) for x in re.findall(r"\d+", text)]):
                self.todo.append((p.name, f"投 {self.rng.choice(stood)}", None))
        elif "进入PK" in text and not p.out:
            pk = [int(x) for x in re.findall(r"(\d+)号", text.split("进入PK")[0].split("：")[-1])]
            if p.seat not in pk and pk:
                self.todo.append((p.name, f"投 {self.rng.choice(pk)}", None))
        elif text.startswith("你是丘比特"):
            a, b = self.rng.sample(self.others(p), 2)
            self.todo.append((p.name, f"连 {a} {b}", None))
        elif "请选择查验目标" in text:
            self.todo.append((p.name, f"验 {self.rng.choice(self.others(p))}", None))
        elif "请选择守护目标" in text:
            self.todo.append((p.name, f"守 {self.rng.choice(self.others(p))}", None))
        elif "请选择<防火墙>目标" in text:
            self.todo.append((p.name, f"防火墙 {self.rng.choice(self.others(p))}", None))
        elif "请选择感染目标" in text:
            self.todo.append((p.name, f"感染 {self.rng.choice(self.others(p))}", None))
        elif m := re.search(r"今晚被\w\w的角色：(\d+)号", text):  # the witch's 通灵
            target = int(m[1])
            if not p.saved and target != p.seat and self.rng.random() < 0.5:
                p.saved = True
                self.todo.append((p.name, f"救 {target}", None))
            else:
                self.todo.append((p.name, "不救", None))
        elif (("请在次日八点前答复" in text and "净化" in text) or "你可以使用<过载>" in text
              or "你的解药已用" in text):
            self.todo.append((p.name, "过", None))
        elif "提交遗言" in text:
            self.todo.append((p.name, f"遗言 {LAST_WORDS}", None))
        elif "发送：移交 座位号" in text:  # the prompt, or its reminder
            self.todo.append((p.name, f"移交 {self.rng.choice(self.others(p))}", None))
        elif "可以发动<粉碎机>" in text or text.startswith("你已出局，可以开枪"):
            # the shot's prompt (a refusal names the 粉碎机 too; the role DM says 可以开枪)
            self.todo.append((p.name, f"开枪 {self.rng.choice(self.others(p))}", None))

    def room_post(self, room: str, text: str) -> None:
        if self.over or not re.search(r"请共同选择今晚的\w\w目标", text):
            return
        wolves = [p for p in self.players.values() if p.name in self.rooms.get(room, [])
                  and not p.out and p.seat in self.alive]
        if not wolves:
            return
        w = min(wolves, key=lambda p: p.seat)  # one wolf speaks for the room
        target = self.rng.choice(self.others(w, avoid=w.mates))
        self.todo.append((w.name, f"刀 {target}", room))
        self.todo.append((w.name, "锁定", room))

    # the game ----------------------------------------------------------------------------------
    def deal(self) -> None:
        got = self.say(JUDGE, f"新游戏 {ruleset_name(self.ruleset)} votes.channel=dm")
        m = re.search(r"游戏码[ ：]([A-Z0-9]{4,8})", got[0].text)
        assert m, got
        self.code = m[1]
        for i, name in enumerate(self.players, 1):
            got = self.say(name, f"报名 {self.code} 马甲{i:02d}")
            assert self.replied(got, name, "报名成功")
        self.say(JUDGE, "开始")
        self.flush()

    def play(self, max_hours: int = 24 * 30) -> None:
        for _ in range(max_hours):
            self.flush()
            if self.over:
                return
            self.advance()
        raise AssertionError(f"no end after {max_hours} hours: {self.c.transcript[-40:]}")


def dealt(ruleset: str) -> Counter[str]:
    """The role names a preset game of `ruleset` deals with its default options, as its data
    names them."""
    rs = get_ruleset(ruleset)
    defaults = {key: default for key, (_, default) in rs.option_spec.items()}
    return Counter(role_name(ruleset, role) for role in rs.preset(PLAYERS, defaults))


def start(tmp_path: Path, clock: str = START) -> ConsoleProcess:
    return ConsoleProcess(f"sqlite:///{tmp_path / 'wj.db'}", tmp_path, clock)


def check_end(transcript: list[str], names: list[str]) -> str:
    """Every player and the judge were told 游戏结束 and CAMP胜利: the camp."""
    told: dict[str, str] = {}
    for m in messages([x for x in transcript if not DRIVER_LINE.fullmatch(x)]):
        if m.head == "→" and m.to and "游戏结束" in m.text:
            camp = re.search(f"({'|'.join(CAMPS)})胜利", m.text)
            if camp:
                told[m.to] = camp[1]
    assert set(told) >= {*names, JUDGE}, sorted(told)
    assert len(set(told.values())) == 1, told
    return next(iter(told.values()))


@pytest.mark.parametrize(("ruleset", "seed"), SEEDS)
def test_a_whole_game_through_wolfjudge_console(tmp_path: Path, ruleset: str,
                                                seed: int) -> None:
    console = start(tmp_path)
    table = Table(console, ruleset, seed)
    try:
        table.deal()
        players = list(table.players.values())
        # Every player got a role DM with both markers, seats 1-12 once each.
        assert sorted(p.seat for p in players) == list(range(1, 13))
        assert Counter(p.role for p in players) == dealt(ruleset), [p.role for p in players]
        table.play()
    finally:
        code = console.close()
    assert code == 0
    camp = check_end(console.transcript, list(table.players))
    assert camp in CAMPS
    made = [line for line in console.transcript if line.startswith("+ @")]
    # The rooms, as the ruleset's roles make them: the killers' room, every wolf but the wolf
    # of a wolf + non-wolf pair of lovers (RULES.md C-SETUP-7), and the judge; the lovers'
    # room, the lovers (unless both are wolves) and the judge; none without either (anomaly:
    # P-ASSIGN-2).
    printed = [x for x in console.transcript if not DRIVER_LINE.fullmatch(x)]
    lovers = {m.to for m in messages(printed) if m.head == "→" and m.to
              in table.players and any(line.startswith("你成为了情侣")
                                       for line in m.text.split("\n"))}
    # Cupid linked (in time, as he was told), where one was dealt.
    cupid = any(p.role == role_name(ruleset, "cupid") for p in players)
    assert len(lovers) == (2 if cupid else 0), lovers
    wolves = {p.name for p in players if p.role == role_name(ruleset, "wolf")}
    mixed = lovers & wolves if not lovers <= wolves else set()
    want = {f"{table.code}狼群": (wolves - mixed) | {JUDGE}} if wolves - mixed else {}
    if lovers and not lovers <= wolves:
        want[f"{table.code}情侣群"] = lovers | {JUDGE}
    rooms = {m.room: sorted(m.text.split()) for m in messages(made) if m.made}
    assert rooms == {room: sorted(members) for room, members in want.items()}
    # The transcript's input and output lines are all in the protocol.
    stray = [x for x in console.transcript
             if not (DRIVER_LINE.fullmatch(x) or OUTPUT_LINE.fullmatch(x))]
    assert stray == []
    assert (tmp_path / "stderr.txt").read_text(encoding="utf-8").count("Traceback") == 0


def test_a_restart_continues_the_game(tmp_path: Path) -> None:
    """End of input mid-game, then a new console on the same database with a later --clock:
    the deadlines that passed meanwhile fire (day 1 opens, and closes), the game goes on."""
    first = start(tmp_path)
    table = Table(first, "classic", 5)
    try:
        table.deal()
        table.flush()  # Cupid links
    finally:
        assert first.close() == 0
    assert not any(re.search(r": 第\d+天讨论日开始", line) for line in first.transcript)
    second = start(tmp_path, "2026-12-01 21:30")
    table.c = second
    try:
        got = messages(second.send("/echo started"))
        texts = [m.text for m in got if m.head == "→"]
        # (what fired at once reaches each seat as one message: the lines of the step)
        lines = [line for t in texts for line in t.split("\n")]
        assert any(line.startswith("第1天讨论日开始") for line in lines)
        assert any(line.startswith("第1天讨论日结束") for line in lines)
        assert any("请共同选择今晚的指杀目标" in t for t in texts)  # night 1, in the room
        # The clock never goes back: an earlier /clock is refused with a note.
        note = second.send("/clock 2026-12-01 08:00")
        assert note == ["# the clock stays at 2026-12-01 21:30 (it never goes back)"]
        table.read(got)
        table.play()
    finally:
        assert second.close() == 0
    check_end(second.transcript, list(table.players))


def test_an_earlier_clock_on_restart_does_not_turn_a_game_back(tmp_path: Path) -> None:
    first = start(tmp_path)
    table = Table(first, "classic", 7)
    try:
        table.deal()
        table.flush()
        table.read(messages(first.send("/clock 2026-12-01 10:00")))  # day 1 is open
        table.flush()  # the players vote: the game's clock is at 10:00
    finally:
        assert first.close() == 0
    second = start(tmp_path, "2026-11-20 08:00")
    try:
        got = second.send("/echo 0")
        assert got == ["# the clock starts at 2026-12-01 10:00, where a game's clock is already "
                       "(it never goes back)", "# 0"]
        after = messages(second.send("/advance 11h"))  # 21:00: day 1 closes
        assert any(line.startswith("第1天讨论日结束") for m in after
                   for line in m.text.split("\n"))
    finally:
        assert second.close() == 0


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUTF8": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True,
                          text=True, encoding="utf-8", env=env, timeout=120)


@pytest.mark.parametrize("args", [(), ("--ruleset", "anomaly", "--seed", "3"),
                                  ("--ruleset", "standard", "--seed", "5")])
def test_wolfjudge_demo_prints_a_protocol_transcript(args: tuple[str, ...]) -> None:
    done = run_cli("demo", *args)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"# winner: [\w-]+", lines[-1]) and lines[-1] != "# winner: none"
    stray = [x for x in lines if not (INPUT_LINE.fullmatch(x) or OUTPUT_LINE.fullmatch(x))]
    assert stray == []
    camp = check_end(lines, sorted({m[1] for x in lines if (m := re.match(r"(玩家\d+): 报名",
                                                                           x))}))
    assert camp in CAMPS

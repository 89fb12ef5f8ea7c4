"""Scenario files (docs/spec/SCENARIOS.md): parse, play through the engine, check expectations."""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import yaml

from bot.commands.convert import judge_command, player_command
from bot.commands.parse import Parsed
from bot.commands.vocabulary import VERBS, Form, VerbSpec
from bot.render import messages_for, render_rejection
from engine import handle, new_game
from engine.commands import Act, JudgeEnd, JudgePause, JudgeResume, JudgeSetTime, Tick
from engine.events import Event, Rejection
from engine.model import OUT_CAUSES, GameState
from engine.options import OptionError
from engine.ruleset import get_ruleset
from rulesets.anomaly.statuses import STAGE
from rulesets.data import YAML_LOADER, read_yaml

START = date(2026, 1, 1)  # calendar day 1 of every scenario
TOP_KEYS = {"name", "ruleset", "options", "seats", "schedule", "steps", "seed", "description",
            "rules"}
# Extension: `rules: [C-WOLF-1, P-DL-6]`, the rule IDs the file checks (what counts a rule as
# covered, tests/test_rule_coverage.py).
RULE_ID = re.compile(r"[A-Z]+(?:-[A-Z0-9]+)+")



def _english(spec: VerbSpec) -> str | None:
    """A verb's scenario name: its English alias."""
    return next((a for a in spec.aliases if a.isascii() and a.isidentifier()), None)


# Skill verbs per ruleset come from the chat vocabulary (bot/commands/vocabulary.yaml), so a
# scenario step and a chat message mean the same Act: one table. (`pass` and `lock` are
# skills of both rulesets.)
RULESET_VERBS: dict[str, dict[str, VerbSpec]] = {}
for _spec in VERBS.values():
    if (_name := _english(_spec)) is not None:
        for _ruleset in _spec.skills:
            RULESET_VERBS.setdefault(_ruleset, {})[_name] = _spec
SKILL_VERBS = {name: spec for verbs in RULESET_VERBS.values() for name, spec in verbs.items()}
# The scenario's judge steps (SCENARIOS.md): English alias -> vocabulary key.
JUDGE_VERBS = {_english(VERBS[key]) or key: key for key in (
    "proxy", "confirm_correction", "reject_correction", "yellow", "red", "notice", "contact",
    "close_at", "open_at")}
CAMPS = {"classic": {"wolves", "village", "black-lovers"}, "anomaly": {"anomaly", "normal"},
         "standard": {"wolves", "village"}}
STAGES = {"growth", "mature", "complete"}


class ScenarioError(Exception):
    """The file itself is wrong (a file error), at a line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class Mismatch(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class Result:
    name: str
    ok: bool
    line: int = 0
    message: str = ""

    def __str__(self) -> str:
        return f"PASS {self.name}" if self.ok else f"FAIL {self.name}: line {self.line}: " \
                                                  f"{self.message}"


@dataclass
class Game:
    """A game played step by step on a simulated clock, recording what each seat was told."""

    state: GameState
    now: datetime
    ruleset: str
    inbox: list[tuple[int, str]] = field(default_factory=list)  # (seat, text), in order
    log: list[Event] = field(default_factory=list)
    commands: list[tuple[datetime, Any]] = field(default_factory=list)

    def record(self, events: list[Event]) -> None:
        for ev in events:
            self.log.append(ev)
            for seat in range(1, len(self.state.seats) + 1):
                text = messages_for(ev, seat, self.ruleset)
                if text:
                    self.inbox.append((seat, text))

    def send(self, command: Any, seat: int | None = None) -> Rejection | None:
        out = handle(self.state, command, self.now)
        if isinstance(out, Rejection):
            if seat is not None:
                self.inbox.append((seat, render_rejection(out, self.ruleset)))
            return out
        self.commands.append((self.now, command))
        self.state, events = out
        self.record(events)
        return None

    def advance(self, target: datetime) -> None:
        """Fire every deadline due at or before `target`, in time order, then set the clock."""
        while True:
            dl = self.state.next_deadline()
            if dl is None or dl.due > target:
                break
            self.now = max(self.now, dl.due)
            self.send(Tick(deadline_id=dl.id))
        self.now = max(self.now, target)


def _lines_of_steps(text: str) -> tuple[int, list[int], dict[str, int]]:
    """Line numbers (1-based) of the `steps` items and of the top-level keys."""
    node = yaml.compose(text, Loader=YAML_LOADER)
    keys: dict[str, int] = {}
    step_lines: list[int] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            keys[key.value] = key.start_mark.line + 1
            if key.value == "steps" and isinstance(value, yaml.SequenceNode):
                step_lines = [item.start_mark.line + 1 for item in value.value]
    return 1, step_lines, keys


def _at(day: str, hhmm: str, line: int) -> datetime:
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", hhmm)
    if not day.isdigit() or int(day) < 1 or not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise ScenarioError(line, f"bad time @{day} {hhmm} (write @DAY HH:MM)")
    return datetime.combine(START + timedelta(days=int(day) - 1),
                            time(int(m.group(1)), int(m.group(2))))


class Scenario:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name

    # parsing -----------------------------------------------------------------
    def load(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
            doc = read_yaml(text)
            _, self.step_lines, self.key_lines = _lines_of_steps(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ScenarioError(mark.line + 1 if mark else 1, f"not valid YAML: {exc}") from None
        except OSError as exc:
            raise ScenarioError(0, f"cannot read the file: {exc}") from None
        if not isinstance(doc, dict):
            raise ScenarioError(1, "a scenario is a YAML mapping with name, ruleset, seats, steps")
        self.name = str(doc.get("name") or self.path.name)
        for key in doc:
            if key not in TOP_KEYS:
                raise ScenarioError(self.key_lines.get(key, 1), f"unknown key {key!r}")
        for key in ("ruleset", "seats", "steps"):
            if key not in doc:
                raise ScenarioError(1, f"missing key {key!r}")
        if not isinstance(doc["steps"], list):
            raise ScenarioError(self.key_lines.get("steps", 1), "steps must be a list")
        rules = doc.get("rules", [])
        if not isinstance(rules, list) or not all(
                isinstance(r, str) and RULE_ID.fullmatch(r) for r in rules):
            raise ScenarioError(self.key_lines.get("rules", 1),
                                "rules is a list of rule IDs, e.g. [C-WOLF-1, S-WIN-1]")
        return doc

    def start(self, doc: dict[str, Any]) -> Game:
        ruleset = str(doc["ruleset"])
        line = self.key_lines.get("ruleset", 1)
        if ruleset not in RULESET_VERBS:
            raise ScenarioError(line, f"unknown ruleset {ruleset!r} "
                                      f"({' | '.join(sorted(CAMPS))})")
        try:
            get_ruleset(ruleset)
        except KeyError:
            raise ScenarioError(line, f"ruleset {ruleset!r} is not available yet") from None
        seats = doc["seats"]
        if not isinstance(seats, list) or not seats:
            raise ScenarioError(self.key_lines.get("seats", 1), "seats must be a list of roles")
        schedule = doc.get("schedule") or {}
        sline = self.key_lines.get("schedule", 1)
        keys = {"open", "close", "timezone", "day_minutes", "night_minutes"}
        if not isinstance(schedule, dict) or set(schedule) - keys:
            raise ScenarioError(sline, "schedule takes open, close (HH:MM), timezone, and for a "
                                       "fast game day_minutes and night_minutes")
        try:
            open_t = time.fromisoformat(str(schedule.get("open", "09:00")))
            close_t = time.fromisoformat(str(schedule.get("close", "21:00")))
        except ValueError:
            raise ScenarioError(sline, "schedule times are HH:MM") from None
        fast: dict[str, Any] = {}
        if "day_minutes" in schedule or "night_minutes" in schedule:
            # Extension: a fast game, day 1 opening at `open` on calendar day 1.
            fast = {"first_open": datetime.combine(START, open_t),
                    "day_minutes": schedule.get("day_minutes"),
                    "night_minutes": schedule.get("night_minutes")}
        options = doc.get("options") or {}
        if not isinstance(options, dict):
            raise ScenarioError(self.key_lines.get("options", 1), "options must be a mapping")
        seed = str(doc.get("seed") or hashlib.sha256(self.name.encode()).hexdigest()[:32])
        try:
            state, events = new_game(ruleset=ruleset, game_id=self.path.stem, seed=seed,
                                     start=START, roles=[str(r) for r in seats],
                                     options=options, open_time=open_t, close_time=close_t,
                                     **fast)
        except OptionError as exc:
            raise ScenarioError(self.key_lines.get("options", 1), str(exc)) from None
        except ValueError as exc:
            raise ScenarioError(self.key_lines.get("seats", 1), str(exc)) from None
        game = Game(state=state, now=datetime.combine(START, time(0, 0)), ruleset=ruleset)
        game.record(events)
        return game

    # running -----------------------------------------------------------------
    def run(self) -> Result:
        try:
            doc = self.load()
            game = self.start(doc)
            self.play(game, doc["steps"])
        except (ScenarioError, Mismatch) as exc:
            return Result(self.name, False, exc.line, exc.message)
        return Result(self.name, True)

    def play(self, game: Game, steps: list[Any]) -> None:
        marker = 0
        pending: tuple[int, str, Rejection] | None = None  # an unexpected refusal so far
        last_rejected = False
        for i, raw in enumerate(steps):
            line = self.step_lines[i] if i < len(self.step_lines) else 0
            if not isinstance(raw, str | int):
                raise ScenarioError(line, "each step is one string")
            text = str(raw).strip()
            words = shlex.split(text) if '"' in text else text.split()
            if not words:
                raise ScenarioError(line, "empty step")
            if words[0] == "expect" and len(words) > 1 and words[1] == "rejected":
                if not last_rejected:
                    raise Mismatch(line, "expected the step before to be rejected, but it was "
                                         "accepted")
                pending, last_rejected = None, False
                continue
            if pending:
                pline, ptext, rej = pending
                raise Mismatch(pline, f"step {ptext!r} was rejected "
                                      f"({rej.code}: {render_rejection(rej, game.ruleset)})")
            last_rejected = False
            if words[0] == "expect":
                marker = self.expect(game, words[1:], line, marker)
                continue
            if words[0] == "wait":
                game.advance(self.wait_target(game, words[1:], line))
                continue
            if words[0].startswith("@"):
                if len(words) < 3:
                    raise ScenarioError(line, "write @DAY HH:MM then the step")
                target = _at(words[0][1:], words[1], line)
                if target < game.now:
                    raise ScenarioError(line, f"time goes backwards: {words[0]} {words[1]} is "
                                              f"before the clock ({game.now:%d %H:%M})")
                game.advance(target)
                words = words[2:]
                if words[0] in ("expect", "wait"):
                    raise ScenarioError(line, "a timed step is an action, not expect/wait")
            refused = self.act(game, words, line, text)
            if refused is not None:
                pending, last_rejected = (line, text, refused), True
        if pending:
            pline, ptext, rej = pending
            raise Mismatch(pline, f"step {ptext!r} was rejected ({rej.code})")

    def wait_target(self, game: Game, args: list[str], line: int) -> datetime:
        sch = game.state.schedule
        if len(args) == 2 and args[0].startswith("@"):
            target = _at(args[0][1:], args[1], line)
        elif len(args) == 1 and re.fullmatch(r"[DN]\d+", args[0]):
            n = int(args[0][1:])
            if n < 1:
                raise ScenarioError(line, "days count from 1")
            target = sch.open_at(n) if args[0][0] == "D" else sch.close_at(n)
        else:
            raise ScenarioError(line, "write wait @DAY HH:MM, wait D3 or wait N2")
        if target < game.now:
            raise ScenarioError(line, "time goes backwards: the clock is already past that")
        return target

    # actions ------------------------------------------------------------------
    def seat(self, game: Game, word: str, line: int) -> int:
        if not word.isdigit() or not 1 <= int(word) <= len(game.state.seats):
            raise ScenarioError(line, f"seat {word!r} is out of range 1..{len(game.state.seats)}")
        return int(word)

    def target(self, game: Game, word: str, line: int, *, none_word: str | None = None
               ) -> int | None:
        if none_word and word == none_word:
            return None
        return self.seat(game, word, line)

    def act(self, game: Game, words: list[str], line: int, text: str) -> Rejection | None:
        cmd, seat = self.command(game, words, line)
        return game.send(cmd, seat)

    def command(self, game: Game, words: list[str], line: int) -> tuple[Any, int | None]:
        """The engine command of an action step, and the seat that sent it (None: the judge).
        Steps become the same `Parsed` commands as chat messages, converted the same way."""
        if words[0] == "judge":
            return self.judge(game, words[1:], line), None
        seat = self.seat(game, words[0], line)
        if len(words) < 2:
            raise ScenarioError(line, "a step is SEAT VERB [ARGS]")
        verb, args = words[1], words[2:]

        def arity(n: int) -> None:
            if len(args) != n:
                raise ScenarioError(line, f"{verb} takes {n} argument(s)")

        def target(word: str) -> tuple[tuple[int, ...], bool]:
            """A vote target: (seats, abstain) for a seat or `abstain`."""
            if word == "abstain":
                return (), True
            return (self.seat(game, word, line),), False

        p: Parsed
        if verb == "vote":
            arity(1)
            p = Parsed(verb="vote", seats=(self.seat(game, args[0], line),))
        elif verb == "abstain":
            arity(0)
            p = Parsed(verb="abstain")
        elif verb in ("change", "request_correct"):
            # `request_correct T` (extension): a player's 更正, pending until the judge rules
            arity(1)
            seats, abstain = target(args[0])
            p = Parsed(verb="change" if verb == "change" else "correct", seats=seats,
                       abstain=abstain)
        elif verb in ("correct", "void"):
            # The judge's forum-vote entries for this seat: 更正 S T, 废票 S.
            arity(1 if verb == "correct" else 0)
            seats, abstain = target(args[0]) if args else ((), False)
            return judge_command(Parsed(verb=verb, seats=(seat, *seats), abstain=abstain),
                                 at=game.now), seat
        elif verb == "handover":
            arity(1)
            p = Parsed(verb="handover", seats=(self.seat(game, args[0], line),))
        elif verb == "lastwords":
            if not args:
                raise ScenarioError(line, "lastwords needs a text")
            p = Parsed(verb="lastwords", text=" ".join(args))
        elif verb == "surrender":
            arity(0)
            p = Parsed(verb="surrender")
        else:
            return self.skill(game, seat, verb, args, line), seat
        return player_command(p, seat=seat, ruleset=game.ruleset), seat

    def skill(self, game: Game, seat: int, verb: str, args: list[str], line: int) -> Act:
        spec = RULESET_VERBS[game.ruleset].get(verb)
        if spec is None:
            if verb in SKILL_VERBS:
                raise ScenarioError(line, f"verb {verb!r} is not part of {game.ruleset}")
            raise ScenarioError(line, f"unknown verb {verb!r}")
        mode: int | None = None
        if len(args) >= 2 and args[-2] == "mode":
            if args[-1] not in ("1", "2"):
                raise ScenarioError(line, _skill_usage(verb, spec, game.ruleset))
            mode, args = int(args[-1]), args[:-2]
        none = VERBS[spec.none] if spec.none else None
        if args == ["none"] and none is not None and game.ruleset in none.skills and mode is None:
            p = Parsed(verb=none.key)
        else:
            seats = tuple(self.seat(game, a, line) for a in args) if all(
                a.isdigit() for a in args) else None
            if seats is None or not any(_fits(f, len(seats), mode) for f in spec.forms):
                raise ScenarioError(line, _skill_usage(verb, spec, game.ruleset))
            p = Parsed(verb=spec.key, seats=seats, mode=mode)
        act = player_command(p, seat=seat, ruleset=game.ruleset)
        assert isinstance(act, Act)
        return act

    def judge(self, game: Game, words: list[str], line: int) -> Any:
        if not words:
            raise ScenarioError(line, "judge needs a verb")
        verb, args = words[0], words[1:]
        # extensions: the judge stops and starts the clock, or ends the game without a winner
        if verb == "pause" and not args:
            return JudgePause()
        if verb == "resume" and not args:
            return JudgeResume()
        if verb == "end":
            reason = " ".join(args)
            if len(reason) > 32:
                raise ScenarioError(line, "judge end takes a reason of at most 32 characters")
            return JudgeEnd(reason=reason)
        key = JUDGE_VERBS.get(verb)
        p: Parsed | None = None
        at = game.now
        if key == "proxy" and len(args) == 2:
            p = Parsed(verb=key, seats=(self.seat(game, args[0], line),)
                       + (() if args[1] == "abstain" else (self.seat(game, args[1], line),)),
                       abstain=args[1] == "abstain")
        elif key in ("confirm_correction", "reject_correction", "yellow", "red", "notice",
                     "contact") and len(args) == 1:
            # confirm/reject_correction (extension): the judge rules on a player's correction
            # request (AMB-P-09)
            p = Parsed(verb=key, seats=(self.seat(game, args[0], line),))
        elif key in ("close_at", "open_at") and len(args) == 2 and args[0].startswith("@"):
            # the step names the day (chat's 开门 HH:MM takes the next one: P-CLOCK-1)
            return JudgeSetTime(which="close" if key == "close_at" else "open",
                                at=_at(args[0][1:], args[1], line))
        if p is None:
            raise ScenarioError(line, f"unknown or malformed judge step: judge {' '.join(words)}")
        return judge_command(p, at=at)

    # expectations -------------------------------------------------------------
    def expect(self, game: Game, words: list[str], line: int, marker: int) -> int:
        state = game.state
        if not words:
            raise ScenarioError(line, "expect what?")
        what, args = words[0], words[1:]

        def fail(msg: str) -> None:
            raise Mismatch(line, msg)

        if what == "dead":
            if len(args) not in (1, 2):
                raise ScenarioError(line, "write expect dead S [CAUSE]")
            st = state.seat(self.seat(game, args[0], line))
            if len(args) == 2 and args[1] not in (*OUT_CAUSES,
                                                  *get_ruleset(game.ruleset).out_causes):
                raise ScenarioError(line, f"unknown cause {args[1]!r}")
            if st.alive:
                fail(f"seat {st.seat} is alive, expected dead")
            if len(args) == 2 and st.out_cause != args[1]:
                fail(f"seat {st.seat} went out by {st.out_cause}, expected {args[1]}")
        elif what == "alive":
            if not args:
                raise ScenarioError(line, "write expect alive S [S ...]")
            for a in args:
                st = state.seat(self.seat(game, a, line))
                if not st.alive:
                    fail(f"seat {st.seat} is out ({st.out_cause}), expected alive")
        elif what == "winner":
            if len(args) != 1 or args[0] not in CAMPS[game.ruleset]:
                raise ScenarioError(line, f"write expect winner CAMP "
                                          f"({' '.join(sorted(CAMPS[game.ruleset]))})")
            if state.winner != args[0]:
                fail(f"winner is {state.winner or 'nobody yet'}, expected {args[0]}")
        elif what == "no-winner":
            if args:
                raise ScenarioError(line, "expect no-winner takes no argument")
            if state.winner:
                fail(f"the game is over: {state.winner} won")
        elif what == "camp":
            if len(args) != 2 or args[1] not in CAMPS[game.ruleset]:
                raise ScenarioError(line, "write expect camp S CAMP")
            st = state.seat(self.seat(game, args[0], line))
            if st.camp != args[1]:
                fail(f"seat {st.seat} is in camp {st.camp}, expected {args[1]}")
        elif what == "role":
            roles = get_ruleset(game.ruleset).roles
            if len(args) != 2 or args[1] not in roles:
                raise ScenarioError(line, f"write expect role S ROLE ({' '.join(roles)})")
            st = state.seat(self.seat(game, args[0], line))
            if st.role != args[1]:
                fail(f"seat {st.seat} was dealt {st.role}, expected {args[1]}")
        elif what == "stage":
            if len(args) != 2 or args[1] not in STAGES:
                raise ScenarioError(line, "write expect stage S growth|mature|complete")
            st = state.seat(self.seat(game, args[0], line))
            stage = st.status(STAGE)
            if stage != args[1]:
                fail(f"seat {st.seat} is at stage {stage}, expected {args[1]}")
        elif what == "sheriff":
            if len(args) != 1:
                raise ScenarioError(line, "write expect sheriff S|none|any")
            sheriff = state.sheriff
            if args[0] == "none":
                if sheriff is not None:
                    fail(f"seat {sheriff} is sheriff, expected none")
            elif args[0] == "any":
                if sheriff is None or not state.seat(sheriff).alive:
                    fail("no living seat holds the badge")
            elif sheriff != self.seat(game, args[0], line):
                fail(f"sheriff is {sheriff or 'none'}, expected {args[0]}")
        elif what == "cards":
            if len(args) not in (2, 3) or not args[1].isdigit() or (
                    len(args) == 3 and args[2] != "red"):
                raise ScenarioError(line, "write expect cards S YELLOWS [red]")
            st = state.seat(self.seat(game, args[0], line))
            want_red = len(args) == 3
            if st.yellow != int(args[1]) or st.red != want_red:
                fail(f"seat {st.seat} has {st.yellow} yellow card(s)"
                     f"{' and a red card' if st.red else ''}, expected {args[1]}"
                     f"{' and a red card' if want_red else ''}")
        elif what in ("told", "not-told"):
            if len(args) != 2:
                raise ScenarioError(line, f'write expect {what} S "TEXT"')
            seat = self.seat(game, args[0], line)
            texts = [t for s, t in game.inbox[marker:] if s == seat]
            hit = any(args[1] in t for t in texts)
            if what == "told" and not hit:
                fail(f'seat {seat} was not told "{args[1]}"; it was told: '
                     + (" | ".join(texts[-8:]) or "nothing"))
            if what == "not-told" and hit:
                fail(f'seat {seat} was told "{args[1]}"')
            return len(game.inbox)
        else:
            raise ScenarioError(line, f"unknown expectation {what!r}")
        return marker


def _fits(form: Form, seats: int, mode: int | None) -> bool:
    """A skill step's seats (and mode) fill this form: its seat slots, a mode slot iff given."""
    kinds = [s.kind for s in form.slots]
    return (set(kinds) <= {"seat", "mode"} and kinds.count("seat") == seats
            and ("mode" in kinds) == (mode is not None))


def _skill_usage(verb: str, spec: VerbSpec, ruleset: str) -> str:
    """`write infect T mode 1|2 or infect T`, from the verb's forms."""
    none = VERBS[spec.none] if spec.none else None
    target = "T|none" if none is not None and ruleset in none.skills else "T"
    forms = [" ".join([verb, *(target if s.kind == "seat" else "mode 1|2" for s in f.slots)])
             for f in spec.forms if all(s.kind in ("seat", "mode") for s in f.slots)]
    return "write " + " or ".join(forms)


def run_files(paths: list[Path]) -> list[Result]:
    return [Scenario(p).run() for p in paths]

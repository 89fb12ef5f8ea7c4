"""Audit: export a game's full log (JSON and a readable Chinese timeline) and verify an export.

An export is signed with the game's own Ed25519 key, whose public key is part of the seed
commitment published in the game's first post. `verify` needs the export file and that
published commitment: from the seed revealed in GameOver it recomputes the commitment (seed,
deal and signing key), checks the signature over every other field, the deal (for a dealt game:
the preset shuffled by draws 0..n-2 of the seed) and every RandomChoice (draw `counter` of the
seed over `options`), that the draws are consecutive (no hidden redraw), and replays the logged
commands through the engine to get the logged events again.

The export of a game still in play is the judge's alone: it says so first, holds every private
event, and no seed material (no seed, no `now`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bot.feed import describe_command
from bot.render import render_event
from bot.service import Service
from bot.store.codec import decode
from bot.store.games import event_of
from bot.store.models import UNDO, LogEntry
from bot.store.signing import ALG, public_key, sign, verify
from bot.undo import NOTICE, NOTICE_PUBLIC, replay_commands
from engine import handle, new_game, rng
from engine.commands import parse_command
from engine.events import Rejection
from engine.model import GameState
from engine.options import validate_options
from engine.ruleset import get_ruleset
from rulesets.data import load

FORMAT = "wolfjudge-export/2"
UNSIGNED_FORMAT = "wolfjudge-export/1"  # still read; it has no signature, so never verified
JUDGE_ONLY = "法官专用：对局未结束，本导出含全部私密信息，勿外传"


def _json(value: Any) -> Any:
    """Plain JSON for people and other tools (int keys become strings, tuples lists)."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def export_game(service: Service, game_id: str) -> dict[str, Any]:
    game, rows, players, refused = service.store.export_rows(game_id)
    params = decode(game.params)
    finished = game.status == "over"  # a halted game's seed was never revealed either
    if not finished:  # no seed material before GameOver reveals the seed
        params.pop("seed", None)
        params.pop("now", None)  # older seeds were made from it
    export: dict[str, Any] = {"judge_only": JUDGE_ONLY} if not finished else {}
    export.update({
        "format": FORMAT,
        "game": {"id": game.id, "ruleset": game.ruleset, "status": game.status,
                 "winner": game.winner, "commitment": game.commitment,
                 "created_at": game.created_at.isoformat(), "params": _json(params),
                 "time_zone": game.time_zone},
        "players": [{"seat": p.seat, "forum_name": p.forum_name} for p in players],
        "log": [_log_entry(r) for r in rows],
        "refused": [{"msg_id": m.msg_id, "at": m.received_at.isoformat(), "outcome": m.outcome,
                     "command": _json(decode(m.command)),
                     "code": (m.rejection or {}).get("code")} for m in refused],
    })
    if game.signing_key is not None:  # games made before signing keys stay unsigned
        export["signature"] = {"alg": ALG, "pubkey": public_key(game.signing_key),
                               "sig": sign(game.signing_key, export)}
    return export


def _log_entry(r: LogEntry) -> dict[str, Any]:
    entry: dict[str, Any] = {"seq": r.seq, "version": r.version, "kind": r.kind,
                             "type": r.type, "at": r.at.isoformat(), "phase": r.phase,
                             "msg_id": r.msg_id}
    if r.kind == "command":
        entry["command"] = _json(decode(r.body))
    elif r.kind == UNDO:
        entry["undo"] = {"seq": int(decode(r.body)["seq"])}
    else:
        ev = event_of(r.body)
        entry["at"] = ev.at.isoformat()
        entry["class_version"] = ev.class_version
        entry["audience"] = ev.audience.model_dump(mode="json")
        entry["data"] = _json(ev.data)
    return entry


# the timeline -----------------------------------------------------------------------------------


def _phase_cn(phase: str) -> str:
    if phase[:1] in "DN" and phase[1:].isdigit():
        return f"第{phase[1:]}{'天' if phase[0] == 'D' else '夜'}"
    return {"SETUP": "开局", "END": "终局"}.get(phase, phase)


def _audience_cn(aud: dict[str, Any] | None) -> str:
    if not aud:
        return "法官"
    if aud.get("public"):
        return "公开"
    seats = "、".join(f"{n}号" for n in aud.get("seats") or [])
    if aud.get("group"):
        return f"{aud['group']}群（{seats or '无人'}）"
    return f"私信 {seats}" if seats else "法官"


def timeline(export: dict[str, Any]) -> str:
    game = export["game"]
    ruleset = game["ruleset"]
    name = load(ruleset, "data").get("name", ruleset)
    lines = [export["judge_only"]] if export.get("judge_only") else []
    lines += [f"对局 {game['id']}（{name}）  状态：{game['status']}"
              + (f"  胜者：{game['winner']}" if game.get("winner") else ""),
              f"随机种子承诺（SHA-256）：{game['commitment']}",
              f"时间均为 {game.get('time_zone', 'Asia/Shanghai')} 当地时间", ""]
    for e in export["log"]:
        at = datetime.fromisoformat(e["at"]).strftime("%m-%d %H:%M")
        head = f"{at} [{_phase_cn(e['phase'])}]"
        if e["kind"] == "command":
            cmd = parse_command(e["command"])
            lines.append(f"{head} ▶ 指令：{describe_command(cmd)}")
            continue
        if e["kind"] == UNDO:
            lines.append(f"{head} ▶ 法官撤销第 {e['undo']['seq']} 条记录的指令")
            continue
        ev = event_of({"type": e["type"], "class_version": e.get("class_version", 1),
                       "at": e["at"], "phase": e["phase"], "audience": e["audience"],
                       "data": e["data"]})
        text = render_event(ev, ruleset) or f"〔{e['type']}〕" + json.dumps(
            e["data"], ensure_ascii=False)
        lines.append(f"{head} [{_audience_cn(e['audience'])}] {text}")
    return "\n".join(lines) + "\n"


# verification ---------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""

    def __str__(self) -> str:
        return f"{'OK  ' if self.ok else 'FAIL'} {self.name}" + (f": {self.detail}"
                                                                 if self.detail else "")


def _params(raw: dict[str, Any], seed: str) -> dict[str, Any]:
    p = dict(raw)
    p["seed"] = seed
    p["start"] = date.fromisoformat(p["start"])
    p["open_time"] = time.fromisoformat(p["open_time"])
    p["close_time"] = time.fromisoformat(p["close_time"])
    p["now"] = datetime.fromisoformat(p["now"]) if p.get("now") else None
    if p.get("first_open"):  # a fast game
        p["first_open"] = datetime.fromisoformat(p["first_open"])
    return p


class _Shape(BaseModel):
    """The parts of an export that verification reads, and their JSON types."""

    model_config = ConfigDict(strict=True)


class _CommandRow(_Shape):
    seq: int
    kind: Literal["command"]
    type: str
    at: str
    phase: str
    command: dict[str, Any]


class _EventRow(_Shape):
    seq: int
    kind: Literal["event"]
    type: str
    at: str
    phase: str
    audience: dict[str, Any]
    data: dict[str, Any]


class _UndoRow(_Shape):
    seq: int
    kind: Literal["undo"]
    type: str
    at: str
    phase: str
    undo: dict[str, int]


class _Header(_Shape):
    id: str
    ruleset: str
    status: str
    winner: str | None
    commitment: str
    params: dict[str, Any]


class _Signature(_Shape):
    alg: Literal["ed25519"]
    pubkey: str
    sig: str


class _Export(_Shape):
    format: Literal["wolfjudge-export/1", "wolfjudge-export/2"]
    game: _Header
    players: list[dict[str, Any]]
    log: list[Annotated[_CommandRow | _EventRow | _UndoRow, Field(discriminator="kind")]]
    refused: list[dict[str, Any]]
    signature: _Signature | None = None


class _Reveal(_Shape):
    winner: str | None = None  # None: the judge ended the game early (GameEnded)
    seed: str
    roles: dict[str, str]


_EXPORT, _REVEAL = TypeAdapter(_Export), TypeAdapter(_Reveal)


def _shape_error(adapter: TypeAdapter[Any], value: Any) -> str | None:
    """What is wrong with the shape of `value`, or None."""
    try:
        adapter.validate_python(value, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{where}: {first['msg']}{more}"
    return None


def verify_export(export: Any, *, commitment: str | None, replay: bool = True) -> list[Check]:
    """Check an export (as read from its JSON file) against `commitment`, the one published
    in the game's first post. Never raises: a malformed export gets a FAIL check."""
    return verify_export_state(export, commitment=commitment, replay=replay)[0]


def verify_export_state(export: Any, *, commitment: str | None, replay: bool = True
                        ) -> tuple[list[Check], GameState | None]:
    """`verify_export`, and the game's final state as the replay of its commands made it
    (None without a replay, or when it failed): what the records read (bot/records)."""
    problem = _shape_error(_EXPORT, export) if isinstance(export, dict) else "not a JSON object"
    if problem is not None:
        return [Check("export readable", False, problem)], None
    checks: list[Check] = []
    final: list[GameState] = []
    try:
        _verify(export, commitment, replay, checks, final)
    except Exception as exc:  # whatever else is wrong with the file, the verdict is FAIL
        checks.append(Check("export readable", False, f"{type(exc).__name__}: {exc}"))
    return checks, final[0] if final and all(c.ok for c in checks) else None


def _verify(export: dict[str, Any], published: str | None, replay: bool,
            checks: list[Check], final: list[GameState]) -> None:
    game, log = export["game"], export["log"]
    checks.append(_log_rows(log))
    checks.append(_signature(export))
    created = next((e for e in log if e["type"] == "GameCreated"), None)
    # GameOver, or GameEnded (the judge ended it early, no winner): both reveal the seed
    over = next((e for e in log if e["type"] in ("GameOver", "GameEnded")), None)
    if created is None:
        checks.append(Check("GameCreated", False, "the log has no GameCreated event"))
        return
    if over is None:
        checks.append(Check("seed revealed", False,
                            "the game is not over: the seed is still secret"))
        return
    problem = _shape_error(_REVEAL, over["data"])
    if problem is not None:
        checks.append(Check("seed revealed", False, f"{over['type']} {problem}"))
        return
    seed = over["data"]["seed"]
    roles_by_seat = {int(k): v for k, v in over["data"]["roles"].items()}
    roles = [roles_by_seat[n] for n in sorted(roles_by_seat)]
    signature = export.get("signature")
    pubkey = signature["pubkey"] if signature else created["data"].get("signing_pubkey")
    recomputed = rng.commitment(seed, roles, pubkey)
    checks.append(_published(recomputed, published))
    logged = created["data"].get("commitment")
    checks.append(Check("commitment", recomputed == logged,
                        f"SHA-256(seed|deal|key) = {recomputed[:16]}…, in GameCreated "
                        f"{str(logged)[:16]}…"))
    checks.append(Check("commitment on record", game["commitment"] == logged))
    checks.append(Check("signing key", created["data"].get("signing_pubkey") == pubkey,
                        "the key announced in GameCreated signed the export"))
    checks.append(_header(game, over["data"].get("winner")))
    raw = game["params"]
    if raw.get("seed") is not None:
        checks.append(Check("seed on record", raw["seed"] == seed))
    params = _params(raw, seed)
    first_counter = 0
    if params.get("roles") is not None:
        checks.append(Check("deal", list(params["roles"]) == roles,
                            "the roles were given by the judge, in seat order"))
    else:
        rs = get_ruleset(params["ruleset"])
        opts = validate_options(rs.options_model, params.get("options"), rs.camps)
        preset = rs.preset(int(params["players"]), opts)
        dealt = rng.shuffled(seed, 0, preset)
        first_counter = len(preset) - 1
        checks.append(Check("deal", dealt == roles,
                            f"preset of {len(preset)} shuffled by draws 0..{first_counter - 1}"))
    draws = [e["data"] for e in log if e["type"] == "RandomChoice"]
    bad = [d for d in draws if rng.choice(seed, d["counter"], d["options"]) != d["picked"]]
    checks.append(Check("random choices", not bad,
                        f"{len(draws)} recomputed" + (f"; wrong: {bad[:3]}" if bad else "")))
    counters = [d["counter"] for d in draws]
    expected = list(range(first_counter, first_counter + len(counters)))
    checks.append(Check("no hidden draws", counters == expected,
                        f"draw counters {counters[:8]}{'…' if len(counters) > 8 else ''}"))
    if replay:
        checks.append(_replay(params, log, final))


def _log_rows(log: list[dict[str, Any]]) -> Check:
    seqs = [e["seq"] for e in log]
    gaps = [n for n, seq in enumerate(seqs, 1) if seq != n]
    return Check("log rows", not gaps, f"{len(seqs)} rows, seq 1..{len(seqs)}" + (
        f"; first out of place: row {gaps[0]} has seq {seqs[gaps[0] - 1]}" if gaps else ""))


def _signature(export: dict[str, Any]) -> Check:
    """The signature covers every field but itself; whose key it is, the commitment says."""
    signature = export.get("signature")
    if signature is None:
        why = f"a {UNSIGNED_FORMAT} file" if export["format"] == UNSIGNED_FORMAT else "no key"
        return Check("signature", False, f"not signed ({why})")
    if export["format"] == UNSIGNED_FORMAT:
        return Check("signature", False, f"a {UNSIGNED_FORMAT} file is never signed")
    body = {k: v for k, v in export.items() if k != "signature"}
    ok = verify(signature["pubkey"], signature["sig"], body)
    return Check("signature", ok, f"Ed25519, key {signature['pubkey'][:16]}…")


def _published(recomputed: str, published: str | None) -> Check:
    if not published:
        return Check("published commitment", False,
                     "not given (use --commitment HEX from the game's first post)")
    ok = published.strip().lower() == recomputed
    return Check("published commitment", ok,
                 f"SHA-256(seed|deal|key) = {recomputed[:16]}…, published "
                 f"{published.strip()[:16]}…")


def _header(game: dict[str, Any], winner: str | None) -> Check:
    """The header agrees with the log (the replay vouches for the log's GameOver)."""
    params = game["params"]
    wrong = [f"{name} {got!r}, log {want!r}" for name, got, want in (
        ("winner", game["winner"], winner), ("status", game["status"], "over"),
        ("id", game["id"], params.get("game_id")),
        ("ruleset", game["ruleset"], params.get("ruleset"))) if got != want]
    return Check("header", not wrong, "; ".join(wrong))


def _replay(params: dict[str, Any], log: list[dict[str, Any]],
            final: list[GameState] | None = None) -> Check:
    """Every logged command through the engine again gives every logged event again (the
    state it ends in goes to `final`)."""
    try:
        state, events = new_game(**params)
        produced = [e.model_dump(mode="json") for e in events]
        undone: set[int] = set()
        in_undo = False
        for i, e in enumerate(log):
            if e["kind"] == UNDO:
                # The replay without every command undone so far (bot/undo.py); the undo's
                # notices are the bot's, read as logged.
                undone.add(e["undo"]["seq"])
                state = _replay_without(params, log[:i], undone, e["version"])
                in_undo = True
                continue
            if e["kind"] != "command":
                if in_undo and e["type"] in (NOTICE, NOTICE_PUBLIC):
                    produced.append(_event_json(e))
                continue
            in_undo = False
            out = handle(state, parse_command(e["command"]),
                         datetime.fromisoformat(e["at"]))
            if isinstance(out, Rejection):
                return Check("replay", False, f"seq {e['seq']} refused: {out.code}")
            state, events = out
            produced += [ev.model_dump(mode="json") for ev in events]
    except Exception as exc:  # a broken file must give a verdict, not a traceback
        return Check("replay", False, f"{type(exc).__name__}: {exc}")
    logged = [_event_json(e) for e in log if e["kind"] == "event"]
    same = json.loads(json.dumps(produced)) == json.loads(json.dumps(logged))
    if final is not None:
        final.append(state)
    return Check("replay", same, f"{len(logged)} events recomputed from the commands")


def _event_json(e: dict[str, Any]) -> dict[str, Any]:
    return {"type": e["type"], "class_version": e.get("class_version", 1), "at": e["at"],
            "phase": e["phase"], "audience": e["audience"], "data": e["data"]}


def _replay_without(params: dict[str, Any], log: list[dict[str, Any]], skip: set[int],
                    version: int) -> GameState:
    """The state of the commands of `log` but those in `skip` (an undo's state)."""
    got = replay_commands(params, ((e["seq"], parse_command(e["command"]),
                                    datetime.fromisoformat(e["at"]))
                                   for e in log if e["kind"] == "command"), skip)
    if isinstance(got, str):
        raise ValueError(f"{got}, refused without the undone")
    return got[0].model_copy(update={"version": version})

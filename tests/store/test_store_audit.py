"""Export, the Chinese timeline, and verification of the seed commitment from an export alone."""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from randomgames import finished_games
from sqlalchemy import update
from storehelp import OPTION_SETS, START, feed, first_post_commitment

from bot.audit import JUDGE_ONLY, export_game, timeline, verify_export
from bot.cli import main
from bot.service import Service
from bot.store.codec import encode
from bot.store.models import Snapshot


def finished_game(service: Service, n: int) -> str:
    opts = [OPTION_SETS[n % len(OPTION_SETS)]]
    game = finished_games(random.Random(n), 1, f"audit{n}-", opts)[0]
    feed(service, game)
    return str(game.args["game_id"])


def failed(checks: list[Any]) -> set[str]:
    return {c.name for c in checks if not c.ok}


def test_export_verifies(service: Service) -> None:
    draws = 0
    for n in range(len(OPTION_SETS)):
        gid = finished_game(service, n)
        data = json.loads(json.dumps(export_game(service, gid)))  # as read from the file
        checks = verify_export(data, commitment=first_post_commitment(service, gid))
        assert failed(checks) == set(), [str(c) for c in checks]
        draws += sum(e["type"] == "RandomChoice" for e in data["log"])
        text = timeline(data)
        assert "随机种子承诺" in text and "▶ 指令" in text and "公开" in text
    assert draws > 0  # some of these games drew lots (ties, handovers, Cupid …)


def test_tampering_is_found(service: Service) -> None:
    gid = finished_game(service, 1)  # OPTION_SETS[1]: random tie-breaks
    good = json.loads(json.dumps(export_game(service, gid)))
    verify = partial(verify_export, commitment=first_post_commitment(service, gid))
    over = next(e for e in good["log"] if e["type"] == "GameOver")

    bad = copy.deepcopy(good)  # another seed revealed than the one committed to
    next(e for e in bad["log"] if e["type"] == "GameOver")["data"]["seed"] = "0" * 16
    assert "commitment" in failed(verify(bad, replay=False))

    bad = copy.deepcopy(good)  # two seats' roles swapped after the fact
    roles = next(e for e in bad["log"] if e["type"] == "GameOver")["data"]["roles"]
    first = next(k for k in roles if roles[k] != roles["1"])
    roles["1"], roles[first] = roles[first], roles["1"]
    assert {"commitment", "deal"} <= failed(verify(bad, replay=False))

    bad = copy.deepcopy(good)  # a command changed in the log
    cmd = next(e for e in bad["log"] if e["kind"] == "command" and e["type"] == "vote")
    cmd["command"]["target"] = None if cmd["command"]["target"] else 1
    assert "replay" in failed(verify(bad))

    draws = [e for e in good["log"] if e["type"] == "RandomChoice"]
    if draws:  # a random pick that the seed did not make
        bad = copy.deepcopy(good)
        d = next(e for e in bad["log"] if e["type"] == "RandomChoice")["data"]
        d["picked"] = next(o for o in d["options"] if o != d["picked"])
        assert "random choices" in failed(verify(bad, replay=False))
    assert over["data"]["seed"] == good["game"]["params"]["seed"]


def test_an_export_in_play_is_the_judges_alone(service: Service) -> None:
    """Issue 13, finding 11: every private event, marked as the judge's, no seed material."""
    created = datetime(2026, 2, 27, 20, 15, 42, 123456)  # older seeds were made from it
    service.create_game(game_id="live", ruleset="classic", seed="s3cret", start=START,
                        players=12, now=created)
    data = json.loads(json.dumps(export_game(service, "live")))
    assert next(iter(data)) == "judge_only" and data["judge_only"] == JUDGE_ONLY
    assert "法官专用" in JUDGE_ONLY and "勿外传" in JUDGE_ONLY
    assert timeline(data).splitlines()[0] == JUDGE_ONLY
    params = data["game"]["params"]
    assert "seed" not in params and "now" not in params
    assert "s3cret" not in json.dumps(data, ensure_ascii=False)
    assert sum(e["type"] == "RoleDealt" for e in data["log"]) == 12  # complete for the judge
    assert "seed revealed" in failed(verify_export(data, commitment=None))

    gid = finished_game(service, 2)
    done = json.loads(json.dumps(export_game(service, gid)))
    assert "judge_only" not in done and "now" in done["game"]["params"]
    assert timeline(done).startswith("对局 ")


def test_cli_export_verify_rebuild(service: Service, db_url: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    gid = finished_game(service, 3)
    out = tmp_path / "game.json"
    assert main(["export", gid, "-o", str(out), "--db", db_url]) == 0
    assert out.exists() and (tmp_path / "game.timeline.txt").exists()
    published = first_post_commitment(service, gid)
    assert main(["verify", str(out), "--commitment", published]) == 0
    assert "verified" in capsys.readouterr().out
    data = json.loads(out.read_text(encoding="utf-8"))
    next(e for e in data["log"] if e["type"] == "GameOver")["data"]["seed"] = "forged"
    out.write_text(json.dumps(data), encoding="utf-8")
    assert main(["verify", str(out), "--commitment", published]) == 1
    assert main(["rebuild", gid, "--db", db_url]) == 0
    assert "equal to the snapshot" in capsys.readouterr().out


def test_cli_export_stays_in_the_working_folder(service: Service, db_url: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13, finding 11: no game id or -o path writes outside the working folder."""
    work = tmp_path / "a" / "b" / "work"
    (work / "sub").mkdir(parents=True)
    (work / "link").symlink_to(tmp_path)
    monkeypatch.chdir(work)
    service.create_game(game_id="g1", ruleset="classic", start=START, players=12)
    assert main(["export", "g1", "--db", db_url]) == 0
    assert {p.name for p in work.iterdir()} == {"sub", "link", "g1.json", "g1.timeline.txt"}
    assert main(["export", "g1", "-o", "sub/ok.json", "--db", db_url]) == 0
    assert main(["export", "g1", "-o", str(work / "y.json"), "--db", db_url]) == 0
    assert (work / "sub" / "ok.timeline.txt").exists() and (work / "y.json").exists()
    capsys.readouterr()
    for output in ("../../x.json", str(tmp_path / "x.json"), "link/x.json", "sub/../../x.json",
                   ".", "sub"):
        assert main(["export", "g1", "-o", output, "--db", db_url]) == 2, output
        assert "working folder" in capsys.readouterr().err
    for game in ("../../x", "a\\b", "/tmp/x"):
        assert main(["export", game, "--db", db_url]) == 2, game
        assert "cannot name a file" in capsys.readouterr().err
    assert not list(tmp_path.rglob("x*")) and {p.name for p in work.iterdir()} == {
        "sub", "link", "g1.json", "g1.timeline.txt", "y.json", "y.timeline.txt"}


def test_rebuild_repairs_a_damaged_snapshot(service: Service) -> None:
    gid = finished_game(service, 11)
    good = service.state(gid)
    damaged = good.model_copy(update={"sheriff": None, "winner": "nobody"})
    with service.db.write() as s:
        s.execute(update(Snapshot).where(Snapshot.game_id == gid).values(
            state=encode(damaged.model_dump())))
    report = service.rebuild(gid)
    assert not report.ok and "differs" in " ".join(report.problems)
    assert service.rebuild(gid, write=True).state == good
    assert service.rebuild(gid).ok and service.state(gid) == good

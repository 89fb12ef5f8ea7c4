"""Every deadline of RULES.md §4.2 and table P-DL-6, end to end: the service, the store
and the scheduler's jobs together, on a fake clock (Asia/Shanghai, day 1 = 2026-03-02)."""

from __future__ import annotations

from datetime import time, timedelta

from schedhelp import (
    ANOMALY,
    Bot,
    assert_card_announced,
    assert_ticks_once,
    judge_text,
    linked,
    quiet_night,
    rows,
    vote_all,
)

from engine.commands import (
    Act,
    Handover,
    JudgeExtend,
    JudgeProxy,
    JudgeSetSchedule,
    JudgeSetTime,
    JudgeWaiver,
    LastWords,
    Vote,
)
from rulesets.anomaly.statuses import SHOT_DUE

SECOND = timedelta(seconds=1)


def cards(bot: Bot) -> dict[int, tuple[int, bool]]:
    return {s.seat: (s.yellow, s.red) for s in bot.state().seats if s.yellow or s.red}


# setup -----------------------------------------------------------------------------------------
def test_p_dl_6_cupid_before_day_1_random_pair_and_a_yellow_card(bot: Bot) -> None:
    bot.new_game()
    assert bot.jobs()["g1:setup:cupid"] == bot.at(1, 9)
    bot.run_until(bot.at(1, 9) - SECOND)
    assert not cards(bot) and bot.state().phase == "SETUP"
    assert [r[2] for r in rows(bot, "Reminder")] == ["seat:7"]  # 08:30, to Cupid only
    bot.to(1, 9)
    state = bot.state()
    assert state.phase == "D1" and cards(bot) == {7: (1, False)}
    assert sum(1 for s in state.seats if s.lover_of) == 2  # a random pair
    assert_card_announced(bot, 7, "yellow", secret=True)  # it would reveal Cupid
    assert bot.ticks().count("setup:cupid") == 1 and "g1:setup:cupid" not in bot.jobs()
    assert_ticks_once(bot)


def test_p_dl_6_cupid_in_time_no_card_and_his_job_is_gone(bot: Bot) -> None:
    bot.new_game()
    assert "g1:setup:cupid" in bot.jobs()
    assert bot.say(Act(seat=7, skill="link", targets=(8, 9))).accepted
    assert set(bot.jobs()) == {"g1:day_open:1"}
    bot.to(1, 9)
    assert not cards(bot) and "setup:cupid" not in bot.ticks()


# night -------------------------------------------------------------------------------------------
def _to_night_1(bot: Bot, **kw: object) -> None:
    linked(bot, **kw)
    bot.to(1, 10)
    vote_all(bot, 12)
    bot.to(1, 20)


def test_p_dl_2_3_6_night_actions_close_plus_90_with_notice_and_contact_waivers(bot: Bot
                                                                                 ) -> None:
    _to_night_1(bot)
    assert bot.say(JudgeWaiver(seat=2, waiver="notice")).accepted  # told the judge in advance
    bot.to(1, 21)
    assert bot.state().phase == "N1"
    jobs = bot.jobs()
    for key in ("kill", "see", "guard"):
        assert jobs[f"g1:night:1:{key}"] == bot.at(1, 22, 30)
    assert jobs["g1:night:1:witch"] == bot.at(2, 8)
    bot.to(1, 22)
    assert bot.say(JudgeWaiver(seat=4, waiver="contact")).accepted  # the seer got in touch
    bot.run_until(bot.at(1, 22, 30) - SECOND)
    assert not cards(bot)
    bot.to(1, 22, 30)
    # Killers 1 and 3 (2 gave notice) and the seer (contact) missed; the guard never gets one.
    assert cards(bot) == {1: (1, False), 3: (1, False)}
    waived = [r.body["data"] for r in bot.events("CardWaived")]
    assert {(w["seat"], w["waiver"]) for w in waived} == {(2, "notice"), (4, "contact")}
    assert bot.state().night.slots["guard"].expired
    bot.to(2, 9)
    for seat in (1, 3):
        assert_card_announced(bot, seat, "yellow", secret=True)
    assert_ticks_once(bot)


def test_p_dl_4_witch_at_08_00_the_next_morning_then_the_night_resolves(bot: Bot) -> None:
    _to_night_1(bot)
    bot.to(1, 21, 10)
    for cmd in (Act(seat=1, skill="kill", targets=(10,)), Act(seat=1, skill="lock"),
                Act(seat=4, skill="see", targets=(1,)), Act(seat=6, skill="guard", targets=(11,))):
        assert bot.say(cmd).accepted
    assert any(r[:3] == ("Tongling", "dm", "seat:5") for r in bot.outbox())
    bot.run_until(bot.at(2, 8) - SECOND)
    state = bot.state()
    assert not state.night.resolved and state.seat(10).alive and not cards(bot)
    bot.to(2, 8)
    state = bot.state()
    assert state.night.resolved and not state.seat(10).alive
    assert cards(bot) == {5: (1, False)}
    assert [r.at for r in bot.events("NightResolving")] == [bot.wall(2, 8)]
    bot.to(2, 9)
    assert_card_announced(bot, 5, "yellow", secret=True)
    assert_ticks_once(bot)


def test_night_resolves_as_soon_as_all_answered_and_the_post_waits_for_the_open(bot: Bot
                                                                                 ) -> None:
    _to_night_1(bot)
    bot.to(1, 21, 20)
    quiet_night(bot, kill=10)
    assert [r.at for r in bot.events("NightResolving")] == [bot.wall(1, 21, 20)]
    assert not bot.state().seat(10).alive
    assert len(rows(bot, "DayOpened")) == 1  # day 1's: the day's public post waits for 09:00
    assert set(bot.jobs()) == {"g1:day_open:2", "g1:lastwords:1"}
    bot.run_until(bot.at(2, 9) - SECOND)
    assert len(rows(bot, "DayOpened")) == 1
    bot.to(2, 9)
    opened = bot.events("DayOpened")[-1]
    assert opened.at == bot.wall(2, 9) and opened.body["data"]["outs"] == [10]
    assert [r[1:3] for r in rows(bot, "DayOpened")] == [("public", "public")] * 2
    assert not cards(bot)


# day ---------------------------------------------------------------------------------------------
def test_p_vote_vote_close_proxy_cutoff_and_no_changes_in_the_last_hour(bot: Bot) -> None:
    linked(bot)
    assert bot.jobs()["g1:day_open:1"] == bot.at(1, 9)
    bot.to(1, 10)
    assert bot.jobs()["g1:day_close:1"] == bot.at(1, 21)
    vote_all(bot, 12, seats=range(1, 10))
    bot.to(1, 20)
    assert bot.say(Vote(seat=1, mode="change", target=11)).accepted  # C − 60 min: still allowed
    bot.to(1, 20, 1)
    out = bot.say(Vote(seat=2, mode="change", target=11))
    assert out.rejection is not None and out.rejection.code == "change_last_hour"
    bot.to(1, 20, 30)
    assert bot.say(JudgeProxy(seat=10, target=12)).accepted  # C − 30 min: the last proxy
    bot.to(1, 20, 31)
    out = bot.say(JudgeProxy(seat=11, target=12))
    assert out.rejection is not None and out.rejection.code == "proxy_too_late"
    bot.to(1, 20, 59)
    assert bot.say(Vote(seat=11, target=12)).accepted  # a first vote in the last hour is fine
    bot.to(1, 21)
    out = bot.say(Vote(seat=12, target=11))  # the close fired first
    assert out.rejection is not None and out.rejection.code == "no_vote_now"
    state = bot.state()
    assert state.phase == "N1" and state.sheriff == 12
    assert cards(bot) == {12: (1, False)}  # P-VOTE-9: 12 did not vote
    assert any(r[:3] == ("YellowCard", "dm", "seat:12") for r in bot.outbox())
    bot.to(2, 9)
    assert_card_announced(bot, 12, "yellow")
    assert_ticks_once(bot)


def test_p_card_1_a_second_yellow_is_a_red_card_at_once(bot: Bot) -> None:
    _to_night_1(bot)
    bot.to(1, 22, 30)  # the killers and the seer miss: a first yellow card each
    assert cards(bot) == {1: (1, False), 2: (1, False), 3: (1, False), 4: (1, False)}
    bot.to(2, 10)
    vote_all(bot, None, seats=[s for s in range(1, 13) if s != 1])  # 1 does not vote
    bot.to(2, 21)
    state = bot.state()
    assert cards(bot)[1] == (2, True) and state.seat(1).out_cause == "red-card"
    assert any(r[:3] == ("YellowCard", "dm", "seat:1") and "累计 2 张" in r[3]
               for r in bot.outbox())
    bot.to(2, 21, 5)
    quiet_night(bot)
    bot.to(3, 9)
    assert_card_announced(bot, 1, "red")  # the second card, for not voting, is public
    assert_ticks_once(bot)


# after deaths ------------------------------------------------------------------------------------
def test_p_dl_1_exiled_sheriff_hands_over_by_close_plus_30_and_last_words(bot: Bot) -> None:
    linked(bot)
    bot.to(1, 10)
    vote_all(bot, 8)  # 8 (a lover of 9) is sheriff
    bot.to(1, 21, 5)
    quiet_night(bot)
    bot.to(2, 10)
    vote_all(bot, 8)
    bot.to(2, 21)
    state = bot.state()
    assert not state.seat(8).alive and not state.seat(9).alive  # 9 follows 8 (lovers)
    jobs = bot.jobs()
    assert jobs["g1:handover:2"] == bot.at(2, 21, 30)
    assert jobs["g1:lastwords:2"] == bot.at(3, 9)
    bot.run_until(bot.at(2, 21, 30) - SECOND)
    assert bot.state().handover_due == 8 and not cards(bot)
    bot.to(2, 21, 30)
    state = bot.state()
    assert state.handover_due is None and state.sheriff not in (None, 8)
    assert cards(bot) == {8: (1, False)}
    assert [r.body["data"]["how"] for r in bot.events("SheriffChanged")][-1] == "random"
    quiet_night(bot)
    bot.to(3, 8, 59)
    assert bot.say(LastWords(seat=8, text="我是好人")).accepted
    bot.to(3, 9)  # 9 said nothing: waived, no card (AMB-P-02)
    out = bot.say(LastWords(seat=9, text="晚了"))
    assert out.rejection is not None and out.rejection.code == "no_lastwords_due"
    assert cards(bot) == {8: (1, False)} and bot.state().lastwords_due == []
    assert any(r[:2] == ("LastWords", "public") for r in bot.outbox())
    assert_card_announced(bot, 8, "yellow")  # out, but the card concerns his handover duty
    assert_ticks_once(bot)


def test_p_dl_6_sheriff_out_at_night_hands_over_before_the_next_open(bot: Bot) -> None:
    _to_night_1(bot)
    bot.to(1, 21, 30)
    quiet_night(bot, kill=12)  # the sheriff dies tonight
    assert bot.jobs()["g1:handover:1"] == bot.at(2, 9)
    bot.run_until(bot.at(2, 9) - SECOND)
    assert bot.state().handover_due == 12
    bot.to(2, 9)
    state = bot.state()
    assert state.sheriff not in (None, 12) and cards(bot) == {12: (1, False)}
    assert_card_announced(bot, 12, "yellow")  # a DM to the out sheriff; in the D2 opening post
    assert_ticks_once(bot)


def test_sheriff_who_hands_over_in_time_gets_no_card(bot: Bot) -> None:
    _to_night_1(bot)
    bot.to(1, 21, 30)
    quiet_night(bot, kill=12)
    bot.to(2, 8)
    assert bot.say(Handover(seat=12, target=4)).accepted
    assert "g1:handover:1" not in bot.jobs()
    bot.to(2, 9)
    assert bot.state().sheriff == 4 and not cards(bot)


def _anomaly_to_day_2(bot: Bot) -> None:
    bot.new_game(roles=ANOMALY, ruleset="anomaly", rooms={"public": "room-g1"})
    bot.to(1, 10)
    vote_all(bot, 10)
    bot.to(1, 21, 5)
    for cmd in (Act(seat=1, skill="pass"), Act(seat=2, skill="see", targets=(1,)),
                Act(seat=5, skill="firewall", targets=(7,)), Act(seat=3, skill="pass")):
        assert bot.say(cmd).accepted, cmd
    bot.to(2, 10)


def test_p_dl_6_anomaly_hunter_exiled_has_until_close_plus_30_no_card(bot: Bot) -> None:
    _anomaly_to_day_2(bot)
    vote_all(bot, 6)
    bot.to(2, 21)
    assert not bot.state().seat(6).alive
    assert bot.jobs()["g1:hunter:6"] == bot.at(2, 21, 30)
    bot.run_until(bot.at(2, 21, 30) - SECOND)
    assert bot.state().seat(6).status(SHOT_DUE)
    bot.to(2, 21, 30)
    assert not bot.state().seat(6).status(SHOT_DUE)
    out = bot.say(Act(seat=6, skill="shoot", targets=(12,)))
    assert out.rejection is not None and bot.state().seat(12).alive
    assert not cards(bot)  # anomaly.hunter_yellow = false
    assert any(r[:3] == ("HunterDue", "dm", "seat:6") for r in bot.outbox())
    assert_ticks_once(bot)


def test_p_dl_6_anomaly_hunter_out_at_night_has_until_the_next_open(bot: Bot) -> None:
    _anomaly_to_day_2(bot)
    vote_all(bot, None)
    bot.to(2, 21, 5)
    for cmd in (Act(seat=1, skill="pass"), Act(seat=1, skill="lock"),
                Act(seat=2, skill="see", targets=(6,)), Act(seat=5, skill="firewall", targets=(8,)),
                Act(seat=3, skill="pass")):
        assert bot.say(cmd).accepted, cmd
    bot.to(3, 10)
    vote_all(bot, None)
    bot.to(3, 21, 5)
    for cmd in (Act(seat=1, skill="pass"), Act(seat=2, skill="see", targets=(7,)),
                Act(seat=5, skill="firewall", targets=(9,)), Act(seat=3, skill="format",
                                                               targets=(6,))):
        assert bot.say(cmd).accepted, cmd
    state = bot.state()
    assert state.seat(6).out_cause == "format" and state.seat(6).status(SHOT_DUE)
    assert bot.jobs()["g1:hunter:6"] == bot.at(4, 9)
    bot.run_until(bot.at(4, 9) - SECOND)
    assert bot.state().seat(6).status(SHOT_DUE)
    bot.to(4, 9)
    assert not bot.state().seat(6).status(SHOT_DUE) and not cards(bot)
    assert bot.ticks().count("hunter:6") == 1
    assert_ticks_once(bot)


# reminders ---------------------------------------------------------------------------------------
def test_reminders_are_dms_to_owing_seats_before_the_deadline_and_a_judge_summary(bot: Bot
                                                                                   ) -> None:
    # (the judge hears of reminders with 法官通知 全部; with 摘要 they are quiet)
    linked(bot, options={"reminders.before": "10min"}, judge_feed="all")
    bot.to(1, 10)
    vote_all(bot, 12, seats=range(1, 11))
    assert bot.jobs()["g1:remind:day_close:1"] == bot.at(1, 20, 50)
    bot.run_until(bot.at(1, 20, 50) - SECOND)
    assert not rows(bot, "Reminder")
    bot.to(1, 20, 50)
    assert [r[1:3] for r in rows(bot, "Reminder")] == [("dm", "seat:11"), ("dm", "seat:12")]
    assert "尚未完成投票（截止 03-02 21:00）：11号、12号" in judge_text(bot)
    vote_all(bot, 12, seats=[11, 12])
    bot.to(1, 21, 5)
    assert bot.say(Act(seat=4, skill="see", targets=(1,))).accepted
    bot.to(1, 22, 20)  # killers and guard owe, each reminded alone (not in the wolves' room)
    night = [r[1:3] for r in rows(bot, "Reminder")][2:]
    assert sorted(night) == [("dm", "seat:1"), ("dm", "seat:2"), ("dm", "seat:3"),
                             ("dm", "seat:6")]
    assert "尚未完成行动（截止" in judge_text(bot)
    bot.to(2, 9)
    # No reminder and no summary ever went to a group or the public room.
    for type_, channel, _target, _text in bot.outbox():
        if type_ == "Reminder":
            assert channel == "dm"
        assert type_ != "LateSummary"  # judge only: in the judge's digest, nowhere else
    assert all(r[1] != "group" or r[0] != "Reminder" for r in bot.outbox())
    assert_ticks_once(bot)


# the judge moves deadlines -------------------------------------------------------------------
def test_judge_time_changes_move_the_jobs_and_are_announced(bot: Bot) -> None:
    linked(bot)
    bot.to(1, 12)
    assert bot.say(JudgeSetTime(which="close", at=bot.wall(1, 22))).accepted
    jobs = bot.jobs()
    assert jobs["g1:day_close:1"] == bot.at(1, 22)
    assert jobs["g1:remind:day_close:1"] == bot.at(1, 21, 30)
    assert any(r[:2] == ("TimeChanged", "public") for r in bot.outbox())
    vote_all(bot, 12)
    bot.to(1, 21, 30)
    assert bot.state().phase == "D1"  # not at the old 21:00
    bot.to(1, 22)
    assert bot.state().phase == "N1"
    assert bot.jobs()["g1:night:1:see"] == bot.at(1, 23, 30)
    assert bot.say(JudgeExtend(seat=4, at=bot.wall(2, 0, 30))).accepted
    jobs = bot.jobs()
    assert jobs["g1:night:1:see"] == bot.at(2, 0, 30)
    assert jobs["g1:night:1:kill"] == bot.at(1, 23, 30)  # only the seer's deadline moved
    assert any(r[:3] == ("DeadlineExtended", "dm", "seat:4") for r in bot.outbox())
    assert bot.say(JudgeSetSchedule(open=time(10, 0), close=time(20, 0))).accepted
    assert bot.jobs()["g1:day_open:2"] == bot.at(2, 10)
    assert any(r[:2] == ("ScheduleChanged", "public") for r in bot.outbox())
    bot.to(1, 23, 30)
    assert 4 not in cards(bot) and 1 in cards(bot)
    bot.to(2, 0, 30)
    assert 4 in cards(bot)
    bot.to(2, 9, 59)
    assert bot.state().phase == "N1"
    bot.to(2, 10)
    assert bot.state().phase == "D2" and bot.jobs()["g1:day_close:2"] == bot.at(2, 20)
    assert_ticks_once(bot)


# the other rows of P-DL-6 -----------------------------------------------------------------------
def test_p_dl_6_anomaly_night_head_seer_guard_close_plus_90_witch_08_00(bot: Bot) -> None:
    bot.new_game(roles=ANOMALY, ruleset="anomaly", rooms={"public": "room-g1"})
    bot.to(1, 10)
    vote_all(bot, 10)
    bot.to(1, 21)
    jobs = bot.jobs()
    for key in ("head", "see", "guard"):
        assert jobs[f"g1:night:1:{key}"] == bot.at(1, 22, 30)
    assert jobs["g1:night:1:witch"] == bot.at(2, 8)
    bot.to(1, 22, 30)
    assert cards(bot) == {1: (1, False), 2: (1, False)}  # wolf head, seer; the guard never
    bot.run_until(bot.at(2, 8) - SECOND)
    assert 3 not in cards(bot)
    bot.to(2, 9)
    assert cards(bot)[3] == (1, False)  # the witch at 08:00
    for seat in (1, 2, 3):
        assert_card_announced(bot, seat, "yellow", secret=True)
    assert_ticks_once(bot)


def test_p_dl_6_anomaly_exiled_sheriff_close_plus_30_random_and_yellow(bot: Bot) -> None:
    _anomaly_to_day_2(bot)  # 10 is sheriff
    vote_all(bot, 10)
    bot.to(2, 21)
    assert bot.jobs()["g1:handover:2"] == bot.at(2, 21, 30)
    bot.to(2, 21, 30)
    state = bot.state()
    assert state.sheriff not in (None, 10) and cards(bot) == {10: (1, False)}
    assert_ticks_once(bot)


def test_p_dl_6_black_lovers_widow_knife_close_plus_90_with_yellow_cards(bot: Bot) -> None:
    bot.new_game()
    assert bot.say(Act(seat=7, skill="link", targets=(1, 8))).accepted  # wolf 1 + villager 8
    bot.to(1, 10)
    vote_all(bot, 12)
    bot.to(1, 21, 5)
    quiet_night(bot)  # the killers are 2 and 3
    for day, exile in ((2, 2), (3, 3)):
        bot.to(day, 10)
        vote_all(bot, exile)
        bot.to(day, 21)
        if day == 2:
            quiet_night(bot)
    state = bot.state()
    assert "wolves" in state.camps_lost and state.phase == "N3"
    assert state.night.slots["kill"].seats == [1, 8]  # 寡妇刀 (C-LOVER-5)
    assert bot.jobs()["g1:night:3:kill"] == bot.at(3, 22, 30)
    bot.run_until(bot.at(3, 22, 30) - SECOND)
    assert 1 not in cards(bot) and 8 not in cards(bot)
    bot.to(3, 22, 30)
    assert cards(bot)[1] == (1, False) and cards(bot)[8] == (1, False)
    assert_ticks_once(bot)


# cards ----------------------------------------------------------------------------------------
def test_p_card_1_the_judge_is_told_at_creation_what_a_send_off_after_secret_cards_reveals(
        bot: Bot) -> None:
    """Issue 13 (9): the judge's digest of the game's creation says that a secret night yellow
    counts toward the red card (cards.night_yellow_counts_to_red), so a send-off after fewer
    public yellows reveals a night or setup duty; no player reads it."""
    bot.new_game("g1")
    bot.new_game("g2", options={"cards.night_yellow_counts_to_red": False})
    bot.new_game("g3", options={"public.announce_night_cards": True})
    created = judge_text(bot, "g1")
    assert created.startswith("【g1】开局\n")
    assert "但计入红牌（2张黄牌即红牌）" in created
    assert "若某人公开的黄牌不足2张就被红牌罚下，所有人都能推知他有过秘密黄牌" in created
    assert "cards.night_yellow_counts_to_red=false" in created
    assert "也不计入红牌" in judge_text(bot, "g2")
    assert "法官须知" not in judge_text(bot, "g3")  # night cards are public there
    for game in ("g1", "g2"):
        assert not [r for r in bot.outbox(game) if r[1] != "judge" and "法官须知" in r[3]]

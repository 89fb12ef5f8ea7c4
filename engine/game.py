"""Game creation: options checked, roles dealt (or taken), setup run, day 1 scheduled."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any

from engine import rng
from engine.context import Ctx
from engine.events import Event
from engine.model import GameState, Schedule, Seat
from engine.options import typed_options, validate_options
from engine.ruleset import RoleSetError, get_ruleset

__all__ = ["RoleSetError", "check_role_set", "new_game"]


def new_game(*, ruleset: str, game_id: str, seed: str, start: date,
             roles: list[str] | None = None, players: int | None = None,
             options: dict[str, Any] | None = None, open_time: time = time(9, 0),
             close_time: time = time(21, 0), now: datetime | None = None,
             first_open: datetime | None = None, day_minutes: int | None = None,
             night_minutes: int | None = None, signing_pubkey: str | None = None
             ) -> tuple[GameState, list[Event]]:
    """Create and start a game: deal (or take) roles, run setup, schedule day 1.
    `signing_pubkey`: the hex public key that will sign the game's export (the bot makes the
    key pair); it goes into the commitment and the GameCreated event."""
    rs = get_ruleset(ruleset)
    opts = validate_options(rs.options_model, options, rs.camps)
    rs.validate(opts)
    counter = 0
    if roles is None:
        if players is None:
            raise ValueError("give the roles or the number of players")
        preset = rs.preset(players, opts)
        roles = rng.shuffled(seed, 0, preset)
        counter = len(preset) - 1
    unknown = [r for r in roles if r not in rs.roles]
    if unknown:
        raise ValueError(f"unknown role(s) for {ruleset}: {', '.join(unknown)}; "
                         f"known: {', '.join(rs.roles)}")
    if first_open is None and open_time >= close_time:
        raise ValueError("the day must open before it closes")
    if first_open is not None and (
            not day_minutes or not night_minutes or day_minutes <= 0 or night_minutes <= 0):
        raise ValueError("a fast game needs positive day and night lengths in minutes")
    rs.check_game(typed_options(rs.options_model, opts), fast=first_open is not None,
                  hours=None if first_open is not None else (open_time, close_time))
    state = GameState(
        game_id=game_id, ruleset=ruleset, options=opts, seed=seed, rng_counter=counter,
        seats=[Seat(seat=i + 1, role=r, camp="") for i, r in enumerate(roles)],
        schedule=Schedule(start=start, open=open_time, close=close_time, first_open=first_open,
                          day_minutes=day_minutes, night_minutes=night_minutes))
    ctx = Ctx(state, now or datetime.combine(start, time(0, 0)), rs)
    created: dict[str, Any] = {"players": len(roles), "ruleset": ruleset,
                               "commitment": rng.commitment(seed, roles, signing_pubkey)}
    if signing_pubkey is not None:  # only then: events of keyless games stay as they were
        created["signing_pubkey"] = signing_pubkey
    ctx.announce("GameCreated", **created)
    if opts["cards.yellow_to_red"] and not opts["public.announce_night_cards"]:
        # The judge learns up front what a send-off after secret night cards tells the table.
        ctx.note("CardPolicyNote", counted=opts["cards.night_yellow_counts_to_red"],
                 limit=opts["cards.yellow_to_red"])
    for st in state.seats:
        ctx.tell(st.seat, "RoleDealt", seat=st.seat, role=st.role)
    rs.setup(ctx)
    ctx.add_deadline("day_open", 1, "open")
    return state, ctx.events


def check_role_set(*, ruleset: str, roles: list[str], options: dict[str, Any] | None = None
                   ) -> None:
    """Whether a judge's own role set makes a game as the ruleset's presets do (P-LOBBY-2):
    RoleSetError saying why not (the ruleset's `check_roles` over the set dealt, beside a preset
    game of as many seats); OptionError or ValueError for a bad option or a role the options
    do not allow. Pure: both games are made with a throwaway seed and thrown away."""
    rs = get_ruleset(ruleset)
    start = date(2026, 1, 1)
    preset, _ = new_game(ruleset=ruleset, game_id="CHECK", seed="0" * 64, start=start,
                         players=len(roles), options=options)
    dealt, _ = new_game(ruleset=ruleset, game_id="CHECK", seed="0" * 64, start=start,
                        roles=list(roles), options=options)
    rs.check_roles(Ctx(dealt, datetime.combine(start, time(0, 0)), rs),
                   list(preset.camps_on_field))

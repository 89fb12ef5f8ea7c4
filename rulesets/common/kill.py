"""The kill slot (classic's 指杀): who kills tonight, the group they speak in, and the messages
every killer is told (in their group when it is exactly the living killers)."""

from __future__ import annotations

from engine.context import Ctx
from engine.model import GameState

KILL_SLOT = "kill"


def killers(ctx: Ctx, *, whole_camp: bool) -> list[int]:
    """The living holders of <杀人>, or their whole camp (`whole_camp`)."""
    # (read only: opening the night copies no seat)
    holders = ctx.holders(skill="kill")
    if not holders:
        return []
    if whole_camp:
        return [s.seat for s in ctx.holders(camp=holders[0].camp)]
    return [s.seat for s in holders]


def kill_group(state: GameState, seats: list[int], camp_groups: dict[str, str],
               default: str) -> str | None:
    """The group the killers talk in: their camp's (`camp_groups`), else `default`."""
    if not seats:
        return None
    return camp_groups.get(state.seat(seats[0]).camp, default)


def reported_target(ctx: Ctx) -> int | None:
    """The kill slot's current target (what 通灵 reports)."""
    kill = ctx.night.slots.get(KILL_SLOT)
    return kill.sub.targets[0] if kill and kill.sub and kill.sub.targets else None


def tell_killers(ctx: Ctx, type_: str, **data: object) -> None:
    night = ctx.state.night
    assert night is not None
    slot = night.slots.get(KILL_SLOT)
    seats = [n for n in (slot.seats if slot else []) if ctx.state.seat(n).alive]
    group = night.data.get("kill_group")
    if group and set(seats) <= set(ctx.state.groups.get(group, [])):
        ctx.tell_group(group, type_, **data)  # its living members are the living killers
    else:  # killers outside the group (non-default options): private messages
        ctx.tell(seats, type_, **data)

"""The engine's former single module, kept so that its import paths keep working: the engine is
now split by job (engine.context, engine.game, engine.dispatch, engine.flow, engine.voting,
engine.duties, engine.clock). New code imports from those."""

from engine.context import (
    OUT_DUTIES,
    PUBLIC_CARD_REASONS,
    REMINDED,
    TIME_HORIZON,
    Ctx,
    GameOver,
    Reject,
    RulesetHooks,
)
from engine.dispatch import handle, working_copy
from engine.game import new_game

__all__ = ["OUT_DUTIES", "PUBLIC_CARD_REASONS", "REMINDED", "TIME_HORIZON", "Ctx", "GameOver",
           "Reject", "RulesetHooks", "handle", "new_game", "working_copy"]

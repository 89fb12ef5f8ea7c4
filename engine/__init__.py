"""The pure rules engine: handle(state, command, now) -> (state, events) | Rejection."""

from engine.dispatch import handle
from engine.events import Audience, Event, Rejection
from engine.game import new_game
from engine.model import GameState

__all__ = ["Audience", "Event", "GameState", "Rejection", "handle", "new_game"]

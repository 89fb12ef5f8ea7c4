"""The pure rules engine: handle(state, command, now) -> (state, events) | Rejection."""

from engine.core import handle, new_game
from engine.events import Audience, Event, Rejection
from engine.model import GameState

__all__ = ["Audience", "Event", "GameState", "Rejection", "handle", "new_game"]

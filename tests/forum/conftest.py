from __future__ import annotations

import sys
from pathlib import Path

# The chat layer's test table (tests/chat/chathelp.py) drives the bot here too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chat"))

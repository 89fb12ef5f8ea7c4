"""The chart a judge pastes into the forum: win rates with their 95 % intervals, and the
distribution of game lengths. matplotlib on the Agg backend (no display); Chinese labels need a
CJK font: the first of CANDIDATES that font_manager finds, else ASCII labels and a warning."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # a file, never a window: also on a server without a display

from matplotlib import font_manager  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402

from bot.commands.vocabulary import RULESET_NAMES  # noqa: E402
from bot.simulate.stats import texts  # noqa: E402

CANDIDATES = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC", "Source Han Sans SC",
              "Source Han Sans CN", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
              "Microsoft YaHei", "SimHei", "PingFang SC", "Heiti SC", "AR PL UMing CN")
ASCII = {"wins": "Win rate (95% CI)", "days": "Game length (days)", "games": "Games"}


def _known_cjk() -> str | None:
    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CANDIDATES if name in installed), None)


def cjk_font() -> str | None:
    """The family name of an installed CJK font, or None."""
    found = _known_cjk()
    if found is None:
        # matplotlib keeps the font list it made the first time it ran (its cache): a font
        # installed since is not in it until the system's fonts are looked at again
        for path in font_manager.findSystemFonts():
            with contextlib.suppress(Exception):  # a file matplotlib cannot read is skipped
                font_manager.fontManager.addfont(path)
        found = _known_cjk()
    return found


def draw(doc: dict[str, Any], path: str | Path) -> str | None:
    """Write the chart; return the font family used for Chinese (None: ASCII labels)."""
    t = texts()
    r = t["report"]
    font = cjk_font()
    if font is None:
        print("wolfjudge simulate: no CJK font found (install fonts-wqy-microhei or "
              "fonts-noto-cjk); the chart has ASCII labels", file=sys.stderr)
    camps = list(doc["wins"])
    if font:
        plt.rcParams["font.sans-serif"] = [font, "DejaVu Sans"]
        plt.rcParams["axes.unicode_minus"] = False
        labels = [t["camps"].get(c, c) for c in camps]
        name = RULESET_NAMES.get(doc["ruleset"], doc["ruleset"])
        title = r["chart_title"].format(ruleset=name, players=doc["players"],
                                        agent=t["agents"].get(doc["agent"], doc["agent"]),
                                        games=doc["games"])
        wins_label, days_label, games_label = r["chart_wins"], r["chart_days"], r["chart_games"]
    else:
        labels = camps
        title = f"{doc['ruleset']} {doc['players']}p, {doc['agent']}, {doc['games']} games"
        wins_label, days_label, games_label = ASCII["wins"], ASCII["days"], ASCII["games"]
    rates = [doc["wins"][c]["rate"] for c in camps]
    err = [[rate - doc["wins"][c]["ci95"][0] for c, rate in zip(camps, rates, strict=True)],
           [doc["wins"][c]["ci95"][1] - rate for c, rate in zip(camps, rates, strict=True)]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=120)
    bars = left.bar(labels, rates, yerr=err, capsize=6, color="#4c72b0")
    for bar, camp, rate in zip(bars, camps, rates, strict=True):
        top = doc["wins"][camp]["ci95"][1]  # above the interval's whisker, not on it
        left.annotate(f"{rate:.1%}", (bar.get_x() + bar.get_width() / 2, top),
                      xytext=(0, 4), textcoords="offset points", ha="center")
    left.set_ylim(0, 1.08)
    left.yaxis.set_major_formatter(PercentFormatter(1.0))
    left.set_title(wins_label)
    hist = doc["days"]["histogram"]
    right.bar([int(d) for d in hist], list(hist.values()), color="#dd8452")
    right.set_xlabel(days_label)
    right.set_ylabel(games_label)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return font

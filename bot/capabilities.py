"""What the WeChat account can do, in the judges' words (issue 21).

At each login the transport learns what the account can do (`Transport.capabilities`: WeChat's
asks its gateway what the puppet implements); the judges are told which features are on and,
for each one that is off, what happens instead (rooms made by hand and bound with `绑定`,
relay, members changed by hand). The same text is printed by `wolfjudge doctor`. A judge is
told a given report once a day at most: the DM's outbox key carries the report and the date.
"""

from __future__ import annotations

import hashlib
from dataclasses import astuple
from datetime import date

from bot.texts import nouns, t, text_data
from bot.transport import Capabilities

FEATURES = ("send_dm", "create_rooms", "add_members", "remove_members", "list_members")


def read_report(report: object) -> Capabilities | None:
    """The gateway's report (gateway/capabilities.js: the probe's answer, the status page's
    `capabilities`), or None if it is not one."""
    if not isinstance(report, dict) or report.get("wolfjudge") != 1:
        return None
    return Capabilities(send_dm=bool(report.get("sendDm", True)),
                        create_rooms=bool(report.get("createRooms", True)),
                        add_members=bool(report.get("addMembers", True)),
                        remove_members=bool(report.get("removeMembers", True)),
                        list_members=bool(report.get("listMembers", True)),
                        puppet=str(report.get("puppet") or "") or None, reported=True)


def describe(caps: Capabilities, host: str | None = None) -> str:
    """The judges' message: which features are on, which are off, and each fallback. `host`:
    the account's name, when there are several (WOLFJUDGE_HOST)."""
    words = nouns(caps.nouns)
    name = t("capabilities.puppet", name=caps.puppet) if caps.puppet else ""
    account = t("capabilities.host", host=host) if host else ""
    lines = [t("capabilities.head", puppet=name, host=account, **words)]
    if not caps.reported:
        lines.append(t("capabilities.assumed", **words))
        return "\n".join(lines)
    sep = t("capabilities.separator")
    on = [f for f in FEATURES if getattr(caps, f)]
    off = [f for f in FEATURES if not getattr(caps, f)]
    if on:
        lines.append(t("capabilities.on", features=sep.join(
            t(f"capabilities.features.{f}") for f in on)))
    if off:
        lines.append(t("capabilities.off", features=sep.join(
            t(f"capabilities.features.{f}") for f in off)))
    if not caps.send_dm:
        lines.append(t("capabilities.fallback.send_dm", **words))
    if not caps.create_rooms:
        lines.append(t("capabilities.fallback.create_rooms"))
    if not (caps.add_members and caps.remove_members):
        lines.append(t("capabilities.fallback.members"))
    if not caps.list_members:
        lines.append(t("capabilities.fallback.list_members"))
    lines += list(text_data(f"channels.{caps.nouns}.notes"))  # what the platform adds
    return "\n".join(lines)


def dedupe_key(judge: str, caps: Capabilities, day: date, host: str | None = None) -> str:
    """The outbox key of one judge's DM about one account's report on one day."""
    digest = hashlib.sha256(repr((astuple(caps), host)).encode()).hexdigest()[:12]
    return f"chat/capabilities/{judge}/{digest}/{day.isoformat()}"

"""The process that test_store_crash.py kills: it feeds a stream of commands to the service.

    python crash_driver.py DATABASE_URL STREAM.json ACKS.txt SENT.txt

It creates the stream's games (again: creation is idempotent), resumes after the last line of
ACKS.txt, and for each command calls `Service.submit` with the command's message id, then
appends `INDEX MSG_ID STATUS VERSION` to ACKS.txt (an acknowledgement: written only after the
commit). Every few commands it delivers the outbox to a transport that appends each dedupe key
to SENT.txt. It prints `ready` once started and `done` at the end of the stream.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from bot.outbox import OutgoingMessage, deliver
from bot.service import COMMAND, Service
from bot.store.codec import decode


class FileTransport:
    def __init__(self, path: Path) -> None:
        self.file = path.open("a", encoding="utf-8")

    def send(self, message: OutgoingMessage) -> None:
        self.file.write(message.dedupe_key + "\n")
        self.file.flush()  # "sent": in the OS, survives a SIGKILL of this process


def complete_lines(path: Path) -> int:
    """Lines written whole; a line cut by the kill is dropped (it was not acknowledged)."""
    if not path.exists():
        return 0
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) != len(data):
        path.write_bytes(whole)
    return whole.count(b"\n")


def main(url: str, stream_file: str, ack_file: str, sent_file: str) -> int:
    stream = json.loads(Path(stream_file).read_text(encoding="utf-8"))
    service = Service(url)
    transport = FileTransport(Path(sent_file))
    for encoded in stream["games"]:
        args = decode(encoded)
        gid = args["game_id"]
        service.create_game(**args, bindings={n: (f"wx-{gid}-{n}", None) for n in range(1, 13)},
                            rooms={"public": f"room-{gid}"}, judge_contact="wx-judge",
                            judge_feed="all")  # a judge's row for every commit
    start = complete_lines(Path(ack_file))
    print("ready", start, flush=True)
    with open(ack_file, "a", encoding="utf-8") as acks:
        for i in range(start, len(stream["stream"])):
            game_id, msg_id, now, cmd = stream["stream"][i]
            out = service.submit(game_id, COMMAND.validate_python(decode(cmd)),
                                 now=datetime.fromisoformat(now), msg_id=msg_id)
            acks.write(f"{i} {msg_id} {out.status} {out.version}\n")
            acks.flush()
            if i % 7 == 0:
                deliver(service.db, transport)
    while deliver(service.db, transport).sent:
        pass
    print("done", flush=True)
    service.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))

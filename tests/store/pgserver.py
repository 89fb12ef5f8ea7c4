"""A throwaway PostgreSQL for the tests: initdb + pg_ctl in a temporary folder, loopback only.

PostgreSQL refuses to run as root, and CI runs as root: then the server is run as an
unprivileged user (WOLFJUDGE_PG_USER, default `nobody`) by starting initdb and pg_ctl with that
uid (subprocess' `user=`/`group=`), in a folder that user owns.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa


def find_bindir() -> Path | None:
    """Where initdb and pg_ctl are: WOLFJUDGE_PG_BIN, PATH, or Debian's versioned folders."""
    if os.environ.get("WOLFJUDGE_PG_BIN"):
        return Path(os.environ["WOLFJUDGE_PG_BIN"])
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(d) / "pg_ctl").exists() and (Path(d) / "initdb").exists():
            return Path(d)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A throwaway server. `durable=False` (the tests): fsync, synchronous commits and full
    page writes off, for speed; `durable=True`: the server's own defaults, every COMMIT
    flushed to disk, as a production server runs (bench/service.py --durable)."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        self.durable = durable
        self.port = 0
        self.dir: Path | None = None
        self.user: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            self.user = pwd.getpwnam(os.environ.get("WOLFJUDGE_PG_USER", "nobody"))

    def _run(self, *args: str) -> None:
        kw: dict = {}
        if self.user is not None:
            kw = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}
        proc = subprocess.run([str(self.bindir / args[0]), *args[1:]], env=env,
                              cwd=self.dir, capture_output=True, text=True, timeout=120, **kw)
        if proc.returncode != 0:
            log = ""
            if self.dir and (self.dir / "server.log").exists():
                log = (self.dir / "server.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}"
                               f"\n{proc.stderr}\n{log}")

    def start(self) -> None:
        # Under /tmp when run as another user: $TMPDIR may be a folder only root can enter.
        base = "/tmp" if self.user is not None and os.path.isdir("/tmp") else None
        self.dir = Path(tempfile.mkdtemp(prefix="wolfjudge-pg-", dir=base))
        if self.user is not None:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        data = self.dir / "data"
        self._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        for attempt in range(5):
            self.port = _free_port()
            fast = ("" if self.durable else
                    "-F -c fsync=off -c synchronous_commit=off -c full_page_writes=off ")
            opts = f"-h 127.0.0.1 -p {self.port} -k {self.dir} {fast}-c max_connections=60"
            try:
                self._run("pg_ctl", "-D", str(data), "-l", str(self.dir / "server.log"),
                          "-w", "-t", "60", "-o", opts, "start")
                return
            except RuntimeError:
                if attempt == 4:
                    raise

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        engine = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(sql)
        finally:
            engine.dispose()

    def stop(self) -> None:
        if self.dir is None:
            return
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None


@contextlib.contextmanager
def throwaway_server() -> Iterator[PostgresServer]:
    """A started throwaway server, stopped after; a skip without the binaries (a failure when
    WOLFJUDGE_REQUIRE_PG is set: CI sets it)."""
    import pytest

    bindir = find_bindir()
    if bindir is None:
        message = "no PostgreSQL server binaries (initdb, pg_ctl) on this machine"
        if os.environ.get("WOLFJUDGE_REQUIRE_PG"):
            pytest.fail(message)
        pytest.skip(message)
    server = PostgresServer(bindir)
    server.start()
    try:
        yield server
    finally:
        server.stop()

"""Bare references for the raw rounds: the same statements on the same database, without dbladder.

    SQLite      a tight apsw loop on one connection to the same file, with the engine's settings
    PostgreSQL  pgbench -M prepared with an equivalent script, the same number of connections
    MariaDB     sysbench (C, libmariadb, server-side prepared statements) with an equivalent Lua
                script, the same number of connections: the fastest client measured here
                (docs/chirp.md: sysbench against a bare asyncmy loop and mysqlslap)

Each runs as long as our round did and reports the same Measurement; pgbench and sysbench report
every operation's latency (pgbench's per-transaction log, sysbench's latency histogram), so the
percentiles are comparable with ours. A reference that cannot run here (the tool is not
installed) is None, and the round prints without a ratio.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engines.dialect import dialect_of
from .measure import Measurement
from .statements import BENCH_BODY, IDS_PER_TASK, INSERT_POST, POINT_READ, draw_ids, now

if TYPE_CHECKING:
    from ..engines.base import EngineInfo
    from ..urls import DatabaseURL
    from .config import BenchConfig

TOOL_TIMEOUT_MARGIN_S = 30  # beyond the round's own time, before a stuck tool is stopped


@dataclass(frozen=True)
class Reference:
    name: str  # what ran, e.g. "pgbench -M prepared -c 1"
    measurement: Measurement


def rows_per_operation(round_name: str, batch_rows: int) -> int:
    """The rows one operation of the round writes or reads: a batch in batched_inserts, else one."""
    return batch_rows if round_name == "batched_inserts" else 1


def measure(
    url: DatabaseURL, info: EngineInfo, round_name: str, config: BenchConfig, sizes: dict[str, int]
) -> Reference | None:
    """The bare reference of one round on the database `url` (blocking; run it in a thread)."""
    program = dialect_of(url).native_client.program
    if program == "apsw":
        return sqlite_reference(url, info, round_name, config, sizes)
    if program == "pgbench":
        return pgbench_reference(url, round_name, config, sizes)
    return sysbench_reference(url, round_name, config, sizes)


# ---------------------------------------------------------------------------------------------
# SQLite: apsw directly


def sqlite_reference(
    url: DatabaseURL, info: EngineInfo, round_name: str, config: BenchConfig, sizes: dict[str, int]
) -> Reference:
    """A tight loop on one apsw connection: the engine's statements and settings, nothing around them."""
    import apsw

    db = apsw.Connection(os.path.abspath(url.path or ""))
    try:
        # The settings the engine reported, so the file is used the same way.
        db.execute(f"PRAGMA journal_mode={info.durability['journal_mode']}").fetchall()
        db.execute(f"PRAGMA synchronous={info.durability['synchronous']}")
        db.execute(f"PRAGMA cache_size={int(info.settings['cache_size'])}")
        db.set_busy_timeout(int(info.settings.get("busy_timeout", "5000")))
        measured = Measurement()
        record = measured.latency.record
        clock = time.perf_counter_ns
        execute = db.execute
        mask = IDS_PER_TASK - 1
        started = clock()
        deadline = started + int(config.seconds * 1e9)
        count = 0
        if round_name == "point_reads":
            ids = draw_ids(config.seed, 0, sizes["posts"])
            while (begun := clock()) < deadline:
                for _row in execute(POINT_READ, (ids[count & mask],)):
                    break
                record((clock() - begun) // 1000)
                count += 1
            rows = count
        else:
            users = draw_ids(config.seed, 0, sizes["users"])
            batch = rows_per_operation(round_name, config.batch_rows)
            stamp = now()
            while (begun := clock()) < deadline:
                execute("BEGIN IMMEDIATE")
                for j in range(count * batch, (count + 1) * batch):
                    execute(INSERT_POST, (users[j & mask], BENCH_BODY, stamp))
                execute("COMMIT")
                record((clock() - begun) // 1000)
                count += 1
            rows = count * batch
        measured.operations = count
        measured.rows = rows
        measured.seconds = (clock() - started) / 1e9
    finally:
        db.close()
    return Reference("apsw loop, one connection, same file and settings", measured)


# ---------------------------------------------------------------------------------------------
# PostgreSQL: pgbench


def pgbench_script(round_name: str, sizes: dict[str, int], batch_rows: int) -> str:
    """A pgbench script doing what our round does, statement for statement."""
    if round_name == "point_reads":
        return (
            f"\\set id random(1, {sizes['posts']})\n"
            "SELECT id, user_id, body, created_at FROM posts WHERE id = :id;\n"
        )
    rows = rows_per_operation(round_name, batch_rows)
    values = f"'{BENCH_BODY}', {now()}"
    lines = ["BEGIN;"]
    for j in range(rows):
        lines.insert(0, f"\\set u{j} random(1, {sizes['users']})")
        lines.append(f"INSERT INTO posts (user_id, body, created_at) VALUES (:u{j}, {values});")
    lines.append("END;")
    return "\n".join(lines) + "\n"


def pgbench_connection_options(url: DatabaseURL) -> list[str]:
    """pgbench's options for where to connect, the database last: a socket folder (`?host=`) or the
    host and port, the user, each with the server's usual default."""
    return [
        f"--host={url.params.get('host') or url.host or '127.0.0.1'}",
        f"--port={url.port or 5432}",
        f"--username={url.user or 'postgres'}",
        url.database or "postgres",
    ]


def pgbench_reference(
    url: DatabaseURL, round_name: str, config: BenchConfig, sizes: dict[str, int]
) -> Reference | None:
    """pgbench -M prepared with the equivalent script; latencies from its per-transaction log."""
    if not shutil.which("pgbench"):
        return None
    seconds = max(1, math.ceil(config.seconds))  # pgbench -T takes whole seconds
    connections = config.connections
    folder = tempfile.mkdtemp(prefix="dbladder-pgbench-")
    try:
        script = os.path.join(folder, "round.sql")
        with open(script, "w") as stream:
            stream.write(pgbench_script(round_name, sizes, config.batch_rows))
        command = [
            "pgbench",
            "--no-vacuum",
            "--protocol=prepared",
            f"--client={connections}",
            f"--jobs={connections}",
            f"--time={seconds}",
            f"--file={script}",
            "--log",
            f"--log-prefix={folder}/log",
            *pgbench_connection_options(url),
        ]
        environment = dict(os.environ)
        if url.password:
            environment["PGPASSWORD"] = url.password
        subprocess.run(
            command,
            check=True,
            capture_output=True,
            text=True,
            env=environment,
            timeout=seconds + TOOL_TIMEOUT_MARGIN_S,
        )
        measured = Measurement(seconds=float(seconds))
        for name in os.listdir(folder):
            if name.startswith("log"):
                _read_pgbench_log(os.path.join(folder, name), measured)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = rows_per_operation(round_name, config.batch_rows)
    measured.rows = measured.operations * rows
    return Reference(f"pgbench -M prepared, {connections} connection(s)", measured)


def _read_pgbench_log(path: str, measured: Measurement) -> None:
    """Add one pgbench log file: `client transaction latency_us script epoch epoch_us` per line."""
    record = measured.latency.record
    with open(path) as stream:
        for line in stream:
            fields = line.split()
            if len(fields) >= 3 and fields[2].isdigit():
                record(int(fields[2]))
                measured.operations += 1
            elif len(fields) >= 3:  # "failed" or "skipped" instead of a latency
                measured.errors[fields[2]] = measured.errors.get(fields[2], 0) + 1


# ---------------------------------------------------------------------------------------------
# MariaDB: sysbench

SYSBENCH_LUA = """
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  stmt = con:prepare("{sql}")
  param = stmt:bind_create(sysbench.sql.type.BIGINT)
  stmt:bind_param(param)
end
function event()
{body}
end
function thread_done()
  stmt:close()
  con:disconnect()
end
"""
SYSBENCH_HISTOGRAM_LINE = re.compile(r"^\s*([0-9.]+)\s+\|\**\s+(\d+)\s*$")


def sysbench_script(round_name: str, sizes: dict[str, int], batch_rows: int) -> str:
    """A sysbench Lua script doing what our round does, statement for statement: a prepared
    statement, and BEGIN / COMMIT as plain queries as asyncmy sends them."""
    if round_name == "point_reads":
        body = f"  param:set(sysbench.rand.uniform(1, {sizes['posts']}))\n  stmt:execute()"
        return SYSBENCH_LUA.format(sql=POINT_READ, body=body)
    sql = f"INSERT INTO posts (user_id, body, created_at) VALUES (?, '{BENCH_BODY}', {now()})"
    rows = rows_per_operation(round_name, batch_rows)
    body = (
        '  con:query("BEGIN")\n'
        f"  for i = 1, {rows} do\n"
        f"    param:set(sysbench.rand.uniform(1, {sizes['users']}))\n"
        "    stmt:execute()\n"
        "  end\n"
        '  con:query("COMMIT")'
    )
    return SYSBENCH_LUA.format(sql=sql, body=body)


SYSBENCH_PASSWORD_FILE = "password.cnf"
"""The name of the option file that gives sysbench its password (`write_sysbench_password`)."""


def write_sysbench_password(folder: str, password: str) -> str:
    """The option file that gives sysbench its password (`--config-file=NAME`), in `folder`, readable
    by the user alone; its name. On the command line `ps` would show the password to anyone."""
    descriptor = os.open(
        os.path.join(folder, SYSBENCH_PASSWORD_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
    )
    with os.fdopen(descriptor, "w") as stream:
        stream.write(f"mysql-password={password}\n")
    return SYSBENCH_PASSWORD_FILE


def sysbench_connection_options(url: DatabaseURL) -> list[str]:
    """sysbench's options for where to connect: the URL's Unix socket (`?unix_socket=`) or its host
    and port, the user and the database, each with the server's usual default."""
    where = (
        [f"--mysql-socket={url.params['unix_socket']}"]
        if url.params.get("unix_socket")
        else [f"--mysql-host={url.host or '127.0.0.1'}", f"--mysql-port={url.port or 3306}"]
    )
    return [*where, f"--mysql-user={url.user or 'root'}", f"--mysql-db={url.database or ''}"]


def sysbench_reference(
    url: DatabaseURL, round_name: str, config: BenchConfig, sizes: dict[str, int]
) -> Reference | None:
    """sysbench with the equivalent Lua script; latencies from its histogram (in ms, ~1.5 % buckets)."""
    if not shutil.which("sysbench"):
        return None
    seconds = max(1, math.ceil(config.seconds))  # sysbench --time takes whole seconds
    connections = config.connections
    folder = tempfile.mkdtemp(prefix="dbladder-sysbench-")
    try:
        script = os.path.join(folder, "round.lua")
        with open(script, "w") as stream:
            stream.write(sysbench_script(round_name, sizes, config.batch_rows))
        command = [
            "sysbench",
            script,
            "--db-driver=mysql",
            *sysbench_connection_options(url),
            f"--threads={connections}",
            f"--time={seconds}",
            "--events=0",
            "--histogram=on",
        ]
        if url.password:
            # Not on the command line, where ps shows it: an option file in the private folder.
            command.append(
                f"--config-file={os.path.join(folder, write_sysbench_password(folder, url.password))}"
            )
        output = subprocess.run(
            [*command, "run"],
            check=True,
            capture_output=True,
            text=True,
            timeout=seconds + TOOL_TIMEOUT_MARGIN_S,
        ).stdout
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    measured = parse_sysbench_output(output)
    rows = rows_per_operation(round_name, config.batch_rows)
    measured.rows = measured.operations * rows
    return Reference(f"sysbench (libmariadb, prepared), {connections} connection(s)", measured)


def parse_sysbench_output(output: str) -> Measurement:
    """Events, time and the latency histogram of a `sysbench ... --histogram=on run` report."""
    measured = Measurement()
    record = measured.latency.record
    for line in output.splitlines():
        histogram = SYSBENCH_HISTOGRAM_LINE.match(line)
        if histogram:
            value_us = round(float(histogram.group(1)) * 1000)
            for _ in range(int(histogram.group(2))):
                record(value_us)
        elif "total number of events:" in line:
            measured.operations = int(line.split(":")[1])
        elif "total time:" in line:
            measured.seconds = float(line.split(":")[1].strip().rstrip("s"))
        elif "ignored errors:" in line:
            ignored = int(line.split(":")[1].split()[0])
            if ignored:
                measured.errors["ignored"] = ignored
    return measured

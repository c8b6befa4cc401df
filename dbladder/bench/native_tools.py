"""The native reference on a server: pgbench on PostgreSQL, sysbench on MariaDB, each run as a
subprocess on the generator's CPUs with the shop's read mix written as its scripts."""

from __future__ import annotations

import math
import os
import re
import shlex
import subprocess
import tempfile
from typing import Any

from ..engines.base import EngineInfo
from ..roles import RoleLimits, confiner
from ..urls import DatabaseURL
from ..workloads.base import Workload
from .native_config import CATEGORIES, READ_MIX, NativeClientFailed, NativeConfig, read_statements
from .references import (
    SYSBENCH_PASSWORD_FILE,
    TOOL_TIMEOUT_MARGIN_S,
    parse_sysbench_output,
    pgbench_connection_options,
    sysbench_connection_options,
    write_sysbench_password,
)

# ---------------------------------------------------------------------------------------------
# PostgreSQL: pgbench


def pgbench_scripts(workload: Workload, sizes: dict[str, int]) -> dict[str, str]:
    """The three reads as pgbench scripts, file name -> text: the workload's SQL, its `?` filled
    with pgbench variables drawn from the ranges the workload's own draw uses."""
    sql = read_statements(workload)
    # Category names are cat-00 .. cat-99: the number drawn by pgbench, the name made in SQL
    # (pgbench has no string functions), a few nanoseconds of the server's time per page.
    category = "'cat-' || lpad(:c::text, 2, '0')"
    return {
        "product.sql": f"\\set id random(1, {sizes['products']})\n" + _filled(sql["product"], ":id"),
        "page.sql": f"\\set c random(0, {CATEGORIES - 1})\n\\set after random(0, {sizes['products']})\n"
        + _filled(sql["page"], category, ":after"),
        "order.sql": f"\\set id random(1, {sizes['orders']})\n" + _filled(sql["order"], ":id"),
    }


def _filled(statements: tuple[str, ...], *values: str) -> str:
    """Each statement with its `?` replaced by `values` in order (every statement takes them all)."""
    lines = []
    for sql in statements:
        for value in values:
            sql = sql.replace("?", value, 1)
        lines.append(sql + ";\n")
    return "".join(lines)


def pgbench_command(
    url: DatabaseURL, scripts: dict[str, str], seconds: int, config: NativeConfig
) -> list[str]:
    """pgbench's command line for the scripts (run in their folder); the password stays out of it."""
    return [
        "pgbench",
        "--no-vacuum",
        "--protocol=prepared",
        f"--client={config.connections}",
        f"--jobs={min(config.process_count, config.connections)}",
        f"--time={seconds}",
        f"--random-seed={config.seed}",
        *pgbench_file_options(scripts),
        *pgbench_connection_options(url),
    ]


def pgbench_file_options(scripts: dict[str, str], folder: str = "") -> list[str]:
    """`--file=NAME@WEIGHT` for each script of `pgbench_scripts`, weighted as the mix weighs its read."""
    return [f"--file={os.path.join(folder, name)}@{READ_MIX[name.removesuffix('.sql')]}" for name in scripts]


def _pgbench(
    url: DatabaseURL, info: EngineInfo, workload: Workload, sizes: dict[str, int], config: NativeConfig
) -> dict[str, Any]:
    scripts = pgbench_scripts(workload, sizes)
    seconds = max(1, math.ceil(config.seconds))  # pgbench --time takes whole seconds
    environment = dict(os.environ)
    if url.password is not None:
        environment["PGPASSWORD"] = url.password
    with tempfile.TemporaryDirectory(prefix="dbladder-native-") as folder:
        for name, text in scripts.items():
            with open(os.path.join(folder, name), "w") as stream:
                stream.write(text)
        if config.warmup_seconds:
            warmup = pgbench_command(url, scripts, max(1, math.ceil(config.warmup_seconds)), config)
            _tool(warmup, folder, environment, config.warmup_seconds, config.cpus)
        command = pgbench_command(url, scripts, seconds, config)
        output = _tool(command, folder, environment, seconds, config.cpus)
    processed = re.search(r"number of transactions actually processed: (\d+)", output)
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", output)
    if processed is None or tps is None:
        raise NativeClientFailed(f"pgbench's output has no rate: {_last_line(output)}")
    operations = int(processed.group(1))
    return {
        "client": "pgbench",
        "version": _version(["pgbench", "--version"]),
        "command": shlex.join(command),
        "scripts": scripts,
        "connections": config.connections,
        "processes": min(config.process_count, config.connections),
        "operations": operations,
        # pgbench's own time without connecting: transactions / its tps.
        "seconds": operations / float(tps.group(1)) if float(tps.group(1)) else float(seconds),
    }


# ---------------------------------------------------------------------------------------------
# MariaDB: sysbench

SYSBENCH_SCRIPT = """\
-- The shop's read mix: {mix}
local t = sysbench.sql.type
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  product = con:prepare([[{product}]])
  product_id = product:bind_create(t.BIGINT)
  product:bind_param(product_id)
  page = con:prepare([[{page}]])
  page_category = page:bind_create(t.VARCHAR, 32)
  page_after = page:bind_create(t.BIGINT)
  page:bind_param(page_category, page_after)
  order = con:prepare([[{order}]])
  order_id = order:bind_create(t.BIGINT)
  order:bind_param(order_id)
  items = con:prepare([[{items}]])
  items_id = items:bind_create(t.BIGINT)
  items:bind_param(items_id)
end
function thread_done()
  con:disconnect()
end
function event()
  local u = sysbench.rand.uniform_double()
  if u < {product_share} then
    product_id:set(sysbench.rand.uniform(1, {products}))
    product:execute()
  elseif u < {page_share} then
    page_category:set(string.format("cat-%02d", sysbench.rand.uniform(0, {last_category})))
    page_after:set(sysbench.rand.uniform(0, {products}))
    page:execute()
  else
    local id = sysbench.rand.uniform(1, {orders})
    order_id:set(id)
    order:execute()
    items_id:set(id)
    items:execute()
  end
end
"""
SYSBENCH_SCRIPT_NAME = "shop_reads.lua"


def sysbench_script(workload: Workload, sizes: dict[str, int]) -> str:
    """The read mix as a sysbench Lua script of server-side prepared statements."""
    sql = read_statements(workload)
    total = sum(READ_MIX.values())
    (order, items) = sql["order"]
    return SYSBENCH_SCRIPT.format(
        mix=", ".join(f"{name} {weight} %" for name, weight in READ_MIX.items()),
        product=sql["product"][0],
        page=sql["page"][0],
        order=order,
        items=items,
        product_share=READ_MIX["product"] / total,
        page_share=(READ_MIX["product"] + READ_MIX["page"]) / total,
        products=sizes["products"],
        orders=sizes["orders"],
        last_category=CATEGORIES - 1,
    )


def sysbench_command(url: DatabaseURL, seconds: int, config: NativeConfig) -> list[str]:
    """sysbench's command line (run in the script's folder). A password goes in an option file
    beside the script (`--config-file`, readable by the user alone), never on the command line."""
    return [
        "sysbench",
        SYSBENCH_SCRIPT_NAME,
        "--db-driver=mysql",
        *sysbench_connection_options(url),
        *([f"--config-file={SYSBENCH_PASSWORD_FILE}"] if url.password else []),
        f"--threads={config.connections}",
        f"--time={seconds}",
        "--events=0",
        "--rand-type=uniform",
        f"--rand-seed={config.seed}",
        "run",
    ]


def _sysbench(
    url: DatabaseURL, info: EngineInfo, workload: Workload, sizes: dict[str, int], config: NativeConfig
) -> dict[str, Any]:
    script = sysbench_script(workload, sizes)
    seconds = max(1, math.ceil(config.seconds))  # sysbench --time takes whole seconds
    with tempfile.TemporaryDirectory(prefix="dbladder-native-") as folder:  # mode 0700
        with open(os.path.join(folder, SYSBENCH_SCRIPT_NAME), "w") as stream:
            stream.write(script)
        if url.password:
            write_sysbench_password(folder, url.password)
        if config.warmup_seconds:
            warmup = sysbench_command(url, max(1, math.ceil(config.warmup_seconds)), config)
            _tool(warmup, folder, dict(os.environ), config.warmup_seconds, config.cpus)
        command = sysbench_command(url, seconds, config)
        output = _tool(command, folder, dict(os.environ), seconds, config.cpus)
    measured = parse_sysbench_output(output)
    if not measured.seconds:
        raise NativeClientFailed(f"sysbench's output has no rate: {_last_line(output)}")
    return {
        "client": "sysbench",
        "version": _version(["sysbench", "--version"]),
        "command": shlex.join(command),
        "scripts": {SYSBENCH_SCRIPT_NAME: script},
        "connections": config.connections,
        "processes": 1,  # one process, `connections` threads
        "operations": measured.operations,
        "seconds": measured.seconds,
    }


# ---------------------------------------------------------------------------------------------


def _tool(
    command: list[str],
    folder: str,
    environment: dict[str, str],
    seconds: float,
    cpus: tuple[int, ...] | None = None,
) -> str:
    """Run a native client in `folder` on `cpus` (None: any); its standard output, or
    NativeClientFailed with its last words."""
    try:
        done = subprocess.run(
            command,
            preexec_fn=confiner(RoleLimits(cpus=cpus)),
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=seconds + TOOL_TIMEOUT_MARGIN_S,
        )
    except subprocess.TimeoutExpired:
        raise NativeClientFailed(
            f"{command[0]} did not finish within {seconds + TOOL_TIMEOUT_MARGIN_S:.0f} s"
        ) from None
    if done.returncode != 0:
        raise NativeClientFailed(
            f"{command[0]} failed (exit {done.returncode}): {_last_line(done.stderr or done.stdout)}"
        )
    return done.stdout


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _version(command: list[str]) -> str:
    """The first line a client prints for --version."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return lines[0] if lines else "version not known"

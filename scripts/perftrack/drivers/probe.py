"""Read back what the benchmark client's own connection gets: its charset variables.

The server decides a connection's charset from the client's handshake (unless started
with skip-character-set-client-handshake) and from any SET NAMES the client sends, so
only the benchmark tool's own client library can say what a benchmark connection talks.
A tiny sysbench Lua command connects exactly as the workloads do (same binary, same
--mysql-* options) and prints the four variables on one line.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from perftrack.core.errors import ServerError
from perftrack.drivers import sysbench

MARK = "perftrack-connection"
VARIABLES = (
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "collation_connection",
)
PROBE_TIMEOUT_S = 30
LUA = f"""-- perftrack: the benchmark connection's charset variables, on one line
local function probe()
  local con = sysbench.sql.driver():connect()
  local rs = con:query("SELECT {", ".join("@@" + v for v in VARIABLES)}")
  local row = rs:fetch_row()
  print("{MARK} " .. row[1] .. " " .. row[2] .. " " .. row[3] .. " " .. row[4])
  con:disconnect()
end
sysbench.cmdline.commands = {{probe = {{probe}}}}
"""


def connection_charset(target: sysbench.Endpoint, log: Path | None = None) -> dict[str, str]:
    """{variable: value} of a connection made by sysbench to `target`."""
    with tempfile.TemporaryDirectory(prefix="pt-probe-") as d:
        script = Path(d) / "connection_probe.lua"
        script.write_text(LUA)
        cmd = sysbench.command(str(script), "probe", target, tables=1, table_size=1)
        out = sysbench.execute(cmd, PROBE_TIMEOUT_S, log)
    for line in out.text.splitlines():
        parts = line.split()
        if parts[:1] == [MARK] and len(parts) == 1 + len(VARIABLES):
            return dict(zip(VARIABLES, parts[1:], strict=True))
    last = (out.text.strip().splitlines() or ["no output"])[-1]
    raise ServerError(f"cannot read the benchmark connection's charset: {last[:300]}")

#!/usr/bin/env python3
"""The Lua read of client_open_buffers at 1,000 loaded buffers alone, in a checkout.

For comparing two trees in one run while a plugin-level bench cannot (issue 23): the call as the
host makes it (``exec_lua`` of ``require('minime.tools').call``) from a pynvim client, 200 times
(wall p50/min), then 200 times inside Neovim timed with ``os.clock`` (CPU p50/min: on a shared
machine the wall time swings 2x with the load, the CPU time hardly does). One JSON line.

    .venv/bin/python bench/open_buffers_raw.py [TREE]   # TREE: a checkout (default: this one)
    # old against new, back to back:
    git worktree add /tmp/old 867ad1e && ln -s "$PWD/.venv" /tmp/old/.venv
    for i in 1 2 3; do .venv/bin/python bench/open_buffers_raw.py /tmp/old
                       .venv/bin/python bench/open_buffers_raw.py; done
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TREE = Path(sys.argv[1] if sys.argv[1:] else Path(__file__).resolve().parent.parent).resolve()
sys.path.insert(0, str(TREE / "tests"))

from nvim_harness import start  # noqa: E402  (the tree's own harness: its lua/ is loaded)

BUFFERS = 1000
CALLS = 200
SETTLED_S = 2.5
CPU_LOOP = """
local ctx, n = ...
local t = {}
for i = 1, n do
  local t0 = os.clock()
  require('minime.tools').call('open_buffers', {}, ctx)
  t[i] = (os.clock() - t0) * 1e3
end
table.sort(t)
return { t[math.floor(n / 2)], t[1] }
"""


def main() -> None:
    work = tempfile.mkdtemp(prefix="minime-bench-raw-")
    paths = []
    for i in range(BUFFERS):
        path = os.path.join(work, f"file{i:04d}.py")
        Path(path).write_text("".join(f"line {j} of file {i}\n" for j in range(20)))
        paths.append(path)
    # A user's files are older than the 2 s after which open_buffers trusts their directory's
    # stamp instead of an lstat per file (lua/minime/editor/scope.lua): not files made just now.
    settled = time.monotonic() + SETTLED_S
    with start() as nvim:
        nvim.exec_lua(
            "for _, p in ipairs(...) do local b = vim.fn.bufadd(p);"
            " vim.bo[b].buflisted = true; vim.fn.bufload(b) end",
            paths,
        )
        nvim.exec_lua("require('minime').setup({})")
        ctx = nvim.exec_lua("return require('minime.config').tool_ctx(...)", work)
        ctx["cwd"] = work
        ctx["json"] = True  # older trees hand JSON text only with this flag
        code = "return require('minime.tools').call(...)"
        time.sleep(max(0.0, settled - time.monotonic()))
        for _ in range(20):
            nvim.exec_lua(code, "open_buffers", {}, ctx)
        wall = []
        for _ in range(CALLS):
            t0 = time.perf_counter()
            answer = nvim.exec_lua(code, "open_buffers", {}, ctx)
            wall.append((time.perf_counter() - t0) * 1e3)
        cpu_p50, cpu_min = nvim.exec_lua(CPU_LOOP, ctx, CALLS)
    listed = json.loads(answer["value"])["buffers"]
    assert len(listed) == BUFFERS, len(listed)
    print(
        json.dumps(
            {
                "bench": "open_buffers_raw",
                "tree": str(TREE),
                "buffers": BUFFERS,
                "wall_p50_ms": round(statistics.median(wall), 2),
                "wall_min_ms": round(min(wall), 2),
                "lua_cpu_p50_ms": round(cpu_p50, 2),
                "lua_cpu_min_ms": round(cpu_min, 2),
                "answer_bytes": len(answer["value"]),
                "loadavg_1m": os.getloadavg()[0],
            }
        )
    )


if __name__ == "__main__":
    main()

"""What following the agent costs the turn's drawing (issue 21: `follow`, lua/minime/ui/follow.lua).

Through a real headless Neovim: batches of tool_call events, each call naming a new file of the
cwd at a line in its ACP `locations`, handed to `require('minime.rpc').apply` as the host does.
Measured: the main loop's time per batch with `follow = true` (the last location of each batch
shown in the follow window, its file loaded the first time) against the same batches with
`follow = false` in the same run (the float's drawing alone), and the first show of a file not
loaded (`bufload`) against a show in a buffer already loaded.

    .venv/bin/python bench/follow.py [BATCHES]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _common import emit, median, quantile
from nvim_harness import start
from plugin_harness import init

CALLS = 20  # tool calls per batch (a burst of reads)
FILES = 50

RUN = """
local cwd, follow, batches, calls, files = ...
require('minime.config').options.follow = follow
local rpc = require('minime.rpc')
rpc.apply(cwd, { { kind = 'begin', prompt = 'bench', cwd = cwd } })
local times, n = {}, 0
for b = 1, batches do
  local events = {}
  for c = 1, calls do
    n = n + 1
    local path = ('%s/f%02d.txt'):format(cwd, n % files)
    events[c] = { kind = 'tool_call', id = 'c' .. n, title = 'Read', tool_kind = 'read',
      status = 'in_progress', locations = { { path = path, line = 1 + n % 100 } } }
  end
  local t0 = vim.uv.hrtime()
  rpc.apply(cwd, events)
  times[b] = (vim.uv.hrtime() - t0) / 1e6
end
rpc.apply(cwd, { { kind = 'done', stop_reason = 'end_turn' } })
return times
"""


def run(cwd: Path, follow: bool, batches: int) -> list[float]:
    with start(init({"follow": False, "permission": {"idle": 0}})) as nvim:
        nvim.command(f"cd {cwd}")
        nvim.command("edit main.txt")
        return nvim.exec_lua(RUN, str(cwd), follow, batches, CALLS, FILES)


def main() -> None:
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    emit("follow", "loadavg_1m_at_start", os.getloadavg()[0], "load")
    with tempfile.TemporaryDirectory(prefix="minime-follow-bench-") as tmp:
        cwd = Path(os.path.realpath(tmp))
        for i in range(FILES):
            (cwd / f"f{i:02d}.txt").write_text("".join(f"line {j}\n" for j in range(200)))
        (cwd / "main.txt").write_text("mine\n")
        t0 = time.perf_counter()
        off = run(cwd, False, batches)
        on = run(cwd, True, batches)
        common = {"n": batches, "calls_per_batch": CALLS}
        # Batches 1..FILES/CALLS load new files; later ones show files already loaded.
        fresh, loaded = on[: FILES // CALLS], on[FILES // CALLS + 1 :]
        off_said = "the same batches, follow off"
        for metric, value, baseline, of, extra in (
            ("batch_p50", median(on), median(off), off_said, common),
            ("batch_p99", quantile(on, 0.99), quantile(off, 0.99), off_said, common),
            (
                "batch_loading_a_file_p50",
                median(fresh),
                median(loaded),
                "batches showing a file already loaded",
                {"n": len(fresh)},
            ),
        ):
            emit("follow", metric, value, "ms", baseline=baseline, baseline_of=of, **extra)
        emit("follow", "wall", (time.perf_counter() - t0) * 1000, "ms")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""One client-tool round trip (agent -> library handler -> agent), library vs bare SDK.

The same bench agent (bench/agent.py, one process per side) sends the tool's extension request
``{"x": 1, "_meta": {"org.mini-me/sessionId": sid}}`` one after another and times each round
trip on its own clock (time.perf_counter_ns around the SDK's send_request). Side A answers
through ``minime.connect(command=..., tools=[minime.Tool("echo", ...)])``; side B (baseline) is
``acp.connect_to_agent`` with a Client whose ext_method returns the same content-list dict.
Both sides run in this process, in alternating rounds, ROUNDS x N calls each after a warm-up.

Target: the library adds under 0.1 ms at p50 over the bare SDK.

    .venv/bin/python bench/library_roundtrip.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile

from _common import AGENT, PYTHON, TOOL_RESULT_OK, BareSession, emit, ms, quantile, read_json

BENCH = "library_roundtrip"
METHOD = "_minime.py/tools/echo"
ROUNDS = 4
PER_ROUND = 500
WARMUP = 200
TARGET_P50_MS = 0.1


async def main() -> None:
    import minime

    async def echo(request: minime.ToolRequest) -> str:
        return "ok"

    with tempfile.TemporaryDirectory(prefix="minime-bench-") as tmp:
        client = await minime.connect(
            command=[PYTHON, AGENT], cwd=tmp, tools=[minime.Tool("echo", handle=echo)]
        )
        bare = BareSession(lambda method, params: TOOL_RESULT_OK)
        try:
            session = await client.new_session(tmp)
            await bare.start(tmp)
            samples: dict[str, list[int]] = {"library": [], "sdk": []}
            per_round: dict[str, list[float]] = {"library": [], "sdk": []}
            lasts: dict[str, object] = {}
            for round_no in range(ROUNDS):
                warm = WARMUP if round_no == 0 else 20
                order = ("library", "sdk") if round_no % 2 == 0 else ("sdk", "library")
                for side in order:
                    out = os.path.join(tmp, f"{side}-{round_no}.json")
                    command = f'rt {METHOD} {PER_ROUND} {warm} {out} {{"x":1}}'
                    if side == "library":
                        result = await session.complete(command)
                        assert result.stop_reason == "end_turn", result
                    else:
                        await bare.prompt(command)
                    data = read_json(out)
                    samples[side].extend(data["ns"])
                    per_round[side].append(quantile(ms(data["ns"]), 0.5))
                    lasts[side] = data["last"]
        finally:
            await client.close()
            await bare.close()

    if lasts["library"] != lasts["sdk"]:
        emit(BENCH, "answers_differ", True, "bool", library=lasts["library"], sdk=lasts["sdk"])
    lib, sdk = ms(samples["library"]), ms(samples["sdk"])
    added = [a - b for a, b in zip(per_round["library"], per_round["sdk"], strict=True)]
    n = len(lib)
    lib50, lib99 = quantile(lib, 0.5), quantile(lib, 0.99)
    sdk50, sdk99 = quantile(sdk, 0.5), quantile(sdk, 0.99)
    emit(BENCH, "roundtrip_p50", lib50, "ms", baseline=sdk50, baseline_of="bare SDK", n=n)
    emit(BENCH, "roundtrip_p99", lib99, "ms", baseline=sdk99, baseline_of="bare SDK", n=n)
    emit(
        BENCH,
        "added_p50",
        lib50 - sdk50,
        "ms",
        target=f"< {TARGET_P50_MS}",
        met=(lib50 - sdk50) < TARGET_P50_MS,
        # Rounds alternate sides: the p50 difference within each round pair sees one load.
        per_round=[round(d, 4) for d in added],
        per_round_median=quantile(added, 0.5),
    )
    emit(BENCH, "added_p99", lib99 - sdk99, "ms")


if __name__ == "__main__":
    asyncio.run(main())

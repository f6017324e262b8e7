"""``python -m minime.nvim``: the Neovim host the Lua layer starts with ``jobstart(…, {rpc=true})``.

It lives under ``minime.nvim`` so the library itself (``minime``) stays editor-agnostic:
``pip install minime`` has no pynvim, and ``python -m minime`` is not a Neovim program.
"""

from __future__ import annotations


def main() -> None:
    import pynvim

    from ..proctree import become_subreaper
    from .host import Host

    become_subreaper()  # agents' orphaned commands re-parent here, within reach of stop

    nvim = pynvim.attach("stdio")
    host = Host(nvim, log_to="")  # our own process: the SDK's records (root logger) too

    def on_request(name: str, args: list) -> object:
        return None  # Lua only notifies: it never waits on the host

    def on_notification(name: str, args: list) -> None:
        if name == "minime" and args:
            host.dispatch(args[0], args[1] if len(args) > 1 else {})

    try:
        nvim.run_loop(on_request, on_notification)
    finally:
        host.shutdown()


if __name__ == "__main__":
    main()

"""``python -m minime``: the Neovim host the Lua layer starts with ``jobstart(…, {rpc=true})``."""

from __future__ import annotations


def main() -> None:
    import pynvim

    from .nvim.host import Host

    nvim = pynvim.attach("stdio")
    host = Host(nvim)

    def on_request(name: str, args: list) -> object:
        if name == "minime_log":
            host.show_log()
        return None

    def on_notification(name: str, args: list) -> None:
        if name == "minime" and args:
            host.dispatch(args[0], args[1] if len(args) > 1 else {})

    try:
        nvim.run_loop(on_request, on_notification)
    finally:
        host.shutdown()


if __name__ == "__main__":
    main()

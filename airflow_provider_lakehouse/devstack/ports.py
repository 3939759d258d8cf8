"""Pick loopback ports that are free now."""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def is_free(port: int) -> bool:
    """True if nothing listens on ``127.0.0.1:port`` and we could bind it."""
    if not 0 < port < 65536:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def pick_port(
    preferred: int, *, companion_offset: int | None = None, avoid: set[int] | frozenset[int] = frozenset()
) -> int:
    """Return ``preferred`` if free, else the next free port after it.

    :param companion_offset: also require ``port + offset`` free (SeaweedFS puts gRPC on HTTP port + 10000).
    :param avoid: ports already handed out in this start-up.
    """
    port = preferred
    for _ in range(2000):
        wanted = [port] if companion_offset is None else [port, port + companion_offset]
        if not (set(wanted) & avoid) and all(is_free(p) for p in wanted):
            return port
        port += 1
    raise RuntimeError(f"No free loopback port found from {preferred}.")

"""DuckDB's text form of a ``BLOB`` (``'\\xAA\\x00a'``), shared by the lake's value decoding and the Spark
planner's BLOB literals (no pyarrow here: the planner must not import it)."""

from __future__ import annotations

import re


def blob_from_text(text: str) -> bytes:
    r"""DuckDB's cast of text to ``BLOB`` (a default's text, ``'\xAA\x00a'``): ``\xHH`` is the byte HH, any
    other ASCII character its own byte.

    >>> blob_from_text("\\xAA\\x00a")
    b'\xaa\x00a'

    :raises ValueError: DuckDB's error for a backslash that starts no ``\xHH`` or a non-ASCII character.
    """
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            if not re.fullmatch(r"\\x[0-9a-fA-F]{2}", text[index : index + 4]):
                raise ValueError(f"Invalid hex escape code encountered in string -> blob conversion of string {text!r}")
            out.append(int(text[index + 2 : index + 4], 16))
            index += 4
            continue
        if ord(char) > 127:
            raise ValueError(
                f"Invalid byte encountered in STRING -> BLOB conversion of string {text!r}. All non-ascii "
                "characters must be escaped with hex codes (e.g. \\xAA)"
            )
        out.append(ord(char))
        index += 1
    return bytes(out)


#: bytes DuckDB's text of a BLOB escapes although they are printable: the quotes and the backslash
_ESCAPED_PRINTABLE = frozenset(b"\"'\\")


def blob_to_text(value: bytes) -> str:
    r"""DuckDB's text of a ``BLOB`` (``CAST(b AS VARCHAR)``, a partition value): printable ASCII as itself, every
    other byte and the quotes and backslash as ``\xHH`` in capitals.

    >>> blob_to_text(b"a'\x00\xc3\xa9 z")
    'a\\x27\\x00\\xC3\\xA9 z'
    """
    return "".join(
        chr(byte) if 32 <= byte <= 126 and byte not in _ESCAPED_PRINTABLE else f"\\x{byte:02X}" for byte in value
    )

"""Remove known secrets from text before it reaches a log, an error or XCom."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote, quote_plus

MASK = "***"


class Redactor:
    """Replaces every occurrence of the registered secrets (and their URL-encoded forms) with ``***``.

    Drivers sometimes echo a DSN back in an error; URL-encoding turns ``p@ss word`` into
    ``p%40ss%20word``, so both spellings are masked.

    >>> r = Redactor(["s3cr3t pw"])
    >>> r.redact("password=s3cr3t pw and s3cr3t%20pw")
    'password=*** and ***'
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        """Register a secret; empty and very short values are ignored (masking them would garble text)."""
        if not secret or len(secret) < 3:
            return
        for form in (secret, quote(secret, safe=""), quote_plus(secret)):
            self._secrets.add(form)

    def redact(self, text: str) -> str:
        """Return ``text`` with every registered secret replaced by ``***``."""
        # Longest first, so a secret that contains another is masked whole.
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self._secrets)

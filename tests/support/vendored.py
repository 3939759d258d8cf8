"""Files vendored unmodified as test fixtures, each directory with a README listing their sha256 sums."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path


def listed_sha256(directory: Path) -> dict[str, str]:
    """``file name -> sha256`` from the README's ``sha256sum``-style block."""
    text = (directory / "README.md").read_text(encoding="utf-8")
    return {name: digest for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", text, flags=re.MULTILINE)}


def actual_sha256(directory: Path) -> dict[str, str]:
    """``file name -> sha256`` of every file in ``directory`` but its README."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.iterdir())
        if path.is_file() and path.name != "README.md"
    }

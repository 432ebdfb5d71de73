"""Where fumarole keeps what it derives from its inputs (parse tables, compiled libraries), safely.

What is kept there is loaded with pickle or run as code, so the folder must be one no other account
can write to: it is used only if it is ours and writable by nobody else (it is created 0700), and
each file read from it must be ours, a regular file, writable by nobody else.  The folder is
``$FUMAROLE_CACHE_DIR``, else ``$XDG_CACHE_HOME/fumarole``, else ``~/.cache/fumarole``;
``FUMAROLE_NO_CACHE=1`` turns caching off.  Never the shared temporary folder, where anyone can
plant a file under a name we would read.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def cache_directory() -> Path | None:
    """The cache folder the environment names, or None when caching is off."""
    if os.environ.get("FUMAROLE_NO_CACHE", "") not in ("", "0"):
        return None
    given = os.environ.get("FUMAROLE_CACHE_DIR")
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    except RuntimeError:  # no home directory to be found
        return None
    return base / "fumarole"


def is_private(st: os.stat_result) -> bool:
    """Ours and writable by nobody else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def private_folder(create: bool) -> Path | None:
    """The cache folder (made 0700 when ``create``) if it is a private folder, else None."""
    folder = cache_directory()
    if folder is None:
        return None
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError:
        return None
    return folder if stat.S_ISDIR(st.st_mode) and is_private(st) else None


def read_private_file(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is ours, a regular file, not a link and writable by nobody else
    (checked on the open file, so it cannot be swapped between the check and the read), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as opened:
        try:
            st = os.fstat(opened.fileno())
            if not stat.S_ISREG(st.st_mode) or not is_private(st):
                return None
            return opened.read()
        except OSError:
            return None


def write_private_file(folder: Path, name: str, data: bytes) -> bool:
    """Store ``data`` as ``folder/name`` atomically (a private temporary file renamed); False, and
    the folder as it was, when that fails."""
    temporary = None
    try:
        fd, temporary = tempfile.mkstemp(prefix=".writing-", dir=folder)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, folder / name)
        temporary = None
        return True
    except OSError:
        return False
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass

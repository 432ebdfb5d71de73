"""The service's state folder: the last-known-good bundle, written so a crash cannot lose it.

Every write goes to a temporary file in the same folder, is fsync'ed, renamed
over the target (atomic on POSIX), and the folder is fsync'ed so the rename
itself survives a power cut.  A crash before the rename leaves the previous
file intact plus a stray temporary file, which :meth:`StateDir.open` removes,
as it empties ``compile/``, where uploads are unpacked and compiled.
The persisted archive is verified again on restart like any other bundle: the
state folder is not trusted more than an upload.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.serve import serve_errors

LAST_KNOWN_GOOD = "last-known-good.tar.gz"
DECISIONS = "decisions.jsonl"
COMPILE = "compile"  # where uploaded archives are unpacked and compiled, emptied at every start
_TEMP_PREFIX = ".tmp-"


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once: temp file, fsync, rename, fsync the folder."""
    fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX + path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


class StateDir:
    """``--state-dir``: where the last-known-good archive and the decision log live."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def open(cls, path: Path) -> "StateDir":
        """Create the folder if needed and drop the temporary files and compile folders a crash left behind."""
        try:
            path.mkdir(parents=True, exist_ok=True)
            for stray in path.glob(_TEMP_PREFIX + "*"):
                stray.unlink(missing_ok=True)
            shutil.rmtree(path / COMPILE, ignore_errors=True)
            (path / COMPILE).mkdir()
        except OSError as exc:
            raise FumaroleError([serve_errors.state_folder_unusable(str(path), exc.strerror)]) from None
        return cls(path)

    @property
    def last_known_good_path(self) -> Path:
        return self.path / LAST_KNOWN_GOOD

    @property
    def compile_path(self) -> Path:
        return self.path / COMPILE

    @property
    def decisions_path(self) -> Path:
        return self.path / DECISIONS

    def save_last_known_good(self, archive: bytes) -> None:
        try:
            write_atomic(self.last_known_good_path, archive)
        except OSError as exc:
            raise FumaroleError([serve_errors.bundle_not_persisted(str(self.last_known_good_path),
                                                                   exc.strerror or str(exc))]) from None

    def last_known_good(self) -> bytes | None:
        try:
            return self.last_known_good_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise FumaroleError([serve_errors.last_known_good_unreadable(str(self.last_known_good_path),
                                                                         exc.strerror)]) from None

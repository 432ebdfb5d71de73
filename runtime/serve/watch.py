"""``--watch``: activate a bundle folder or archive on disk whenever its content changes.

Polling, not inotify: a mounted ConfigMap changes by swapping a symlink, which
file events report unreliably, and a poll every second costs one pack of a
small folder.  A change is detected by the sha256 of the packed bytes, so
touching a file does nothing and a bundle that failed is not retried (nor
counted again) until its content changes.  The activation is the same call an
upload makes.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles.loader import source_bytes
from fumarole.runtime.serve.registry import BundleRegistry, Busy

log = logging.getLogger("fumarole")


class Watcher:
    def __init__(self, registry: BundleRegistry, path: Path, interval: float = 1.0) -> None:
        self.registry = registry
        self.path = path
        self.interval = interval
        self._seen: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fumarole-watch", daemon=True)

    def poll(self) -> None:
        """Look once; activate if the content is new."""
        source = f"watch:{self.path}"
        try:
            data = source_bytes(self.path, self.registry.limits)
        except FumaroleError as err:
            fingerprint = "unreadable:" + err.render()
            if fingerprint != self._seen:
                self._seen = fingerprint
                self.registry.record_failure(source, "watch", err)
                log.warning("cannot read watched bundle:\n%s", err.render())
            return
        fingerprint = hashlib.sha256(data).hexdigest()
        if fingerprint == self._seen:
            return
        try:
            self.registry.activate(data, source, origin="watch")
        except Busy:
            return  # another change is running: look again next time
        except FumaroleError as err:  # the registry logged the outcome; here, the whole diagnostic
            log.warning("watched bundle not activated:\n%s", err.render())
        self._seen = fingerprint

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

"""`fumarole run` progress: a line on a terminal's stderr, nothing when piped."""

from __future__ import annotations

import io

from fumarole.runtime.cli.progress import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_phase_and_the_tasks_placed_then_a_clean_line():
    stream = _Terminal()
    progress = Progress(stream)
    progress("allocate", 1234)
    assert stream.getvalue() == "\rfumarole: allocate - 1,234 tasks placed"
    progress.done()
    assert stream.getvalue().endswith("\r" + " " * len("fumarole: allocate - 1,234 tasks placed") + "\r")


def test_piped_stderr_gets_nothing(cli):
    stream = io.StringIO()
    progress = Progress(stream)
    progress("allocate", 10)
    progress.done()
    assert stream.getvalue() == ""
    result = cli("run", "examples/cluster.yaml")
    assert "fumarole:" not in result.err

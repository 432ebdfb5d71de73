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


def test_piped_stderr_gets_no_line_drawn_in_place(cli):
    stream = io.StringIO()
    progress = Progress(stream)
    progress("allocate", 10)
    progress.done()
    assert stream.getvalue() == ""  # a short run: nothing at all
    result = cli("run", "examples/cluster.yaml")
    assert "\r" not in result.err


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_log_gets_a_plain_line_every_interval_and_one_at_the_end_never_carriage_returns():
    from fumarole.runtime.cli.progress import PLAIN_EVERY, ProgressBar

    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(5400, "replay prod", " virtual s", stream, clock)
    for step in range(1, 31):
        clock.now = step * PLAIN_EVERY / 4
        bar.update(step * 100)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0] == "replay prod: 7% (400/5,400 virtual s), 10s elapsed"
    assert len(lines) == 8 and lines[-1] == "replay prod: 56% (3,000/5,400 virtual s), 75s elapsed"


def test_short_work_in_a_log_writes_nothing():
    from fumarole.runtime.cli.progress import ProgressBar

    stream, clock = io.StringIO(), _Clock()
    bar = ProgressBar(10, "sweep", " replays", stream, clock)
    clock.now = 3.0
    bar.update(10)
    bar.close()
    assert stream.getvalue() == ""


def test_without_a_known_total_the_bar_counts_instead_of_inventing_a_percentage():
    from fumarole.runtime.cli.progress import ProgressBar

    terminal, clock = _Terminal(), _Clock()
    bar = ProgressBar(None, "replay volcano-default", " virtual s", terminal, clock)
    clock.now = 1.0
    bar.update(7310)
    assert terminal.getvalue() == "\rreplay volcano-default | 7,310 virtual s so far"
    bar.close()
    assert terminal.getvalue().endswith("\rreplay volcano-default: 7,310 virtual s, 1s elapsed\n")
    assert "%" not in terminal.getvalue()


def test_a_long_run_in_a_log_says_its_phase_now_and_then():
    from fumarole.runtime.cli.progress import PLAIN_EVERY

    stream, clock = io.StringIO(), _Clock()
    progress = Progress(stream, clock)
    progress("allocate", 10)
    clock.now = PLAIN_EVERY
    progress("allocate", 5000)
    progress.done()
    assert stream.getvalue() == "fumarole: allocate - 5,000 tasks placed\n"

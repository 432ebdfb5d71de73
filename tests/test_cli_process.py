"""The `fumarole` command as its own process: it ends without tearing its heap down (cli.main.entry),
so what it prints must be flushed first and its exit code must be main()'s."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _fumarole(root, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fumarole.runtime.cli.main", *args], cwd=root,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=120)


def test_the_whole_output_is_written_and_the_exit_code_is_kept(root):
    done = _fumarole(root, "run", "examples/cluster.yaml", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["binds"]["ml/train-worker-1"] == "node-b"  # complete JSON


def test_a_refused_input_still_exits_2_with_its_message(root, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Nod\nmetadata: {name: n1}\n")
    done = _fumarole(root, "run", str(bad))
    assert done.returncode == 2
    assert b"unknown kind 'Nod'" in done.stderr and b"Traceback" not in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pipe closed by its reader")
def test_a_reader_that_went_away_ends_it_quietly(root):
    read_end, write_end = os.pipe()
    os.close(read_end)  # `fumarole run ... | head` once head has exited: every write fails
    try:
        done = _fumarole(root, "run", "examples/cluster.yaml", "-o", "json", stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 0 and done.stderr == b""


def test_only_the_process_s_own_run_gives_up_the_collector(root):
    """In process (serve, replay, tests) `run` leaves the cycle collector as it found it; as the
    process's only job it switches it off after opening the session."""
    import gc

    from fumarole.runtime.cli.main import main

    assert main(["run", str(root / "examples/cluster.yaml"), "-o", "json"]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
    probe = ("import gc, sys\nfrom fumarole.runtime.cli.main import main\n"
             "code = main(['run', 'examples/cluster.yaml', '-o', 'json'], one_shot=True)\n"
             "sys.stderr.write(f'enabled={gc.isenabled()}')\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, timeout=120)
    assert done.returncode == 0 and done.stderr.endswith(b"enabled=False")

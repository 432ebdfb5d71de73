"""Soak: sessions from several client threads while bundles are swapped many times, a third of
them broken or wrongly signed, over real HTTP on loopback, bounded in time."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from fumarole.runtime.bundles.archive import read_archive
from serving_helpers import (
    archive,
    expected_decisions,
    make_service,
    namespaces,
    new_key,
    running,
    soak,
    soak_plan,
    write_bundle,
)

ROUNDS = 12      # 36 uploads: 24 good, 12 broken
CLIENTS = 4


def test_soak_swaps_under_load(tmp_path: Path) -> None:
    key = new_key()
    initial_folder = write_bundle(tmp_path / "initial", "1", namespaces())
    initial = archive(initial_folder, key)
    uploads, expected = soak_plan(tmp_path, key, ROUNDS)
    expected[read_archive(initial, "initial").digest] = expected_decisions(initial_folder)
    broken = {read_archive(data, "x").digest for data, good in uploads if not good}
    # the check below is only meaningful if revisions decide differently
    assert len({json.dumps(d, sort_keys=True) for d in expected.values()}) >= 3

    service = make_service(initial, trusted=[key], state=tmp_path / "state")
    with running(service) as url:
        result = soak(url, uploads, clients=CLIENTS, deadline=120.0, min_sessions=51)  # deadline: a hang guard
        status = httpx.get(url + "/v1/status").json()
        log = httpx.get(url + "/v1/decisions", params={"since": 0, "limit": 10000}).json()
        metrics = httpx.get(url + "/metrics").text

    assert result.failures == []
    assert len(result.sessions) > 50
    for digest, decisions in result.sessions:  # every session: one revision, all of it
        assert digest in expected and decisions == expected[digest]
    assert not result.active_seen & broken and result.active_seen <= set(expected)
    good = [data for data, ok in uploads if ok]
    last = read_archive(good[-1], "last").digest
    assert status["active"]["digest"] == last and status["active"]["signedBy"]
    assert status["counts"] == {"sessions": len(result.sessions), "failedSessions": 0, "rejectedSessions": 0,
                                "swaps": len(good) + 1,
                                "rollbacks": 0, "failedActivations": len(uploads) - len(good),
                                "shadowFailures": 0}
    assert status["lastActivation"]["outcome"] == ("activated" if uploads[-1][1] else "rejected")
    assert (tmp_path / "state" / "last-known-good.tar.gz").read_bytes() == good[-1]
    assert f'fumarole_sessions_total{{outcome="ok"}} {len(result.sessions)}' in metrics
    assert log["last"] == len(result.sessions)
    for entry in log["entries"]:
        assert entry["decisions"] == expected[entry["bundle"]["digest"]]

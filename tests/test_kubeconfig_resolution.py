"""The kubeconfig is found as kubectl finds it: --kubeconfig, else $KUBECONFIG (several files, merged),
else ~/.kube/config; with none, one clear usage error."""

from __future__ import annotations

import json
import os

import yaml
from loopback_api import write_kubeconfig
from test_snapshot import EXAMPLE, api_server  # noqa: F401 - api_server is a fixture


def test_snapshot_reads_the_kubeconfig_kubeconfig_names(cli, tmp_path, api_server, monkeypatch):  # noqa: F811
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1])
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = cli("snapshot")
    assert result.code == 0, result.err
    assert yaml.safe_load(result.out)["kind"] == "List"


def test_kubeconfig_may_list_several_files_that_are_merged(cli, tmp_path, api_server, monkeypatch):  # noqa: F811
    full = yaml.safe_load(write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1]).read_text())
    clusters = tmp_path / "clusters"
    clusters.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": full["clusters"]}))
    rest = tmp_path / "users-and-contexts"
    rest.write_text(yaml.safe_dump({key: value for key, value in full.items() if key != "clusters"}))
    monkeypatch.setenv("KUBECONFIG", f"{rest}{os.pathsep}{clusters}")
    result = cli("run", "--context", "test", "--now", "2026-11-21T12:30:00Z", "-o", "json")
    assert result.code == 0, result.err
    dump = cli("run", str(EXAMPLE / "cluster.yaml"), "--config", str(EXAMPLE / "volcano-scheduler.conf"),
               "--now", "2026-11-21T12:30:00Z", "-o", "json")
    assert json.loads(result.out) == json.loads(dump.out)


def test_without_either_the_home_kubeconfig_is_read(cli, tmp_path, api_server, monkeypatch):  # noqa: F811
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    write_kubeconfig(tmp_path / "kubeconfig", api_server.server_address[1]).rename(home / ".kube" / "config")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(home))
    result = cli("snapshot")
    assert result.code == 0, result.err


def test_no_kubeconfig_anywhere_is_a_usage_error(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    result = cli("snapshot")
    assert result.code == 2 and result.out == ""
    assert "no kubeconfig: give --kubeconfig FILE, set $KUBECONFIG, or write ~/.kube/config" in result.err


def test_run_needs_a_cluster_file_or_a_live_cluster_but_not_both(cli, tmp_path):
    neither = cli("run")
    assert neither.code == 2
    assert "give a cluster file, or --kubeconfig / --context for the live cluster (one of them)" in neither.err
    both = cli("run", str(EXAMPLE / "cluster.yaml"), "--context", "prod")
    assert both.code == 2 and "(one of them)" in both.err

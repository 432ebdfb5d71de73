"""The plugins that decide who may be evicted, admitted or placed together run from a
volcano-scheduler.conf exactly as Volcano's configuration names them, with their upstream
arguments; their decisions are checked by the scenarios under tests/conformance/cases/plugins."""

from __future__ import annotations

import json

# A site's configuration, as Volcano ships it: each plugin under its own name, its
# arguments spelt as the plugin reads them.
SITE_CONF = """actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: cdp
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def test_a_conf_enabling_them_runs_unchanged(cli, tmp_path, root):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(SITE_CONF)
    result = cli("run", str(root / "examples/cluster.yaml"), "--config", str(conf), "-o", "json")
    assert result.code == 0, result.err
    assert "binds" in json.loads(result.out)

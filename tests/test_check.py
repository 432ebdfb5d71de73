"""`fumarole check`: every code from a real input, pinned whole; broken copies of our own policies, all formats."""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fumarole.policy_lang.codes import CODES, STRICT_ONLY
from fumarole.runtime.authoring.scenario import scenario_files

ROOT = Path(__file__).resolve().parent.parent
STDLIB = ROOT / "policies" / "volcano"
CASES = Path(os.environ.get("FUMAROLE_CONFORMANCE", ROOT / "tests" / "conformance" / "cases"))


def write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def check_json(cli, *args: str) -> tuple[int, dict]:
    result = cli("check", "--format", "json", *args)
    assert "Traceback" not in result.out + result.err
    return result.code, json.loads(result.out)


def codes(report: dict) -> set[str]:
    return {d["code"] for d in report["diagnostics"]}


# -- one real input per code -------------------------------------------------------------------

PLUGIN = "plugin x\n\n"
BUNDLE = "apiVersion: fumarole/v1\nkind: PolicyBundle\nmetadata: {name: b}\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2'}}\n"
HYPERNODE = ("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: {name}}}\n"
             "spec:\n  tier: {tier}\n  members:\n  - {{type: {kind}, selector: {{exactMatch: {{name: {member}}}}}}}\n")
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p1\n  namespace: ns\n"
       "  annotations: {scheduling.k8s.io/group-name: nogroup}\nspec: {containers: [{name: c}]}\n"
       "status: {phase: Pending}\n")

TRIGGERS: dict[str, dict[str, str | bytes]] = {
    "P001": {"a.policy": PLUGIN + "on open:\n    let a = 1 @ 2\n"},
    "P002": {"a.policy": PLUGIN + "on open:\n        let a = 1\n    let b = 2\n"},
    "P007": {"a.policy": PLUGIN + "let S = \"" + "a" * 5000 + "\"\n"},
    "E100": {"a.policy": PLUGIN + "on open:\n    let a = nope\n"},
    "E101": {"a.policy": PLUGIN + "on overused(queue) = queue.reclaimble\n"},
    "E102": {"a.policy": PLUGIN + "on job_ready(job) = job.ready_now()\n"},
    "E103": {"a.policy": PLUGIN + "state s: Thing\n"},
    "E104": {"a.policy": PLUGIN + "on job_ordr(job):\n    order by job.priority\n"},
    "E105": {"a.policy": PLUGIN + "on open:\n    let f = len\n"},
    "E110": {"a.policy": PLUGIN + "on open:\n    let a: int = \"text\"\n"},
    "E111": {"a.policy": PLUGIN + "on open:\n    let a = len([1], [2])\n"},
    "E112": {"a.policy": PLUGIN + "on open:\n    let a = len([1], of: 2)\n"},
    "E113": {"a.policy": PLUGIN + "on node_order(task, node) = float(task.job.priority)\n"},
    "E120": {"a.policy": PLUGIN + "on job_pipelined(job):\n    for t in job.tasks:\n        victim t\n"},
    "E121": {"a.policy": PLUGIN + "on job_order(a, b, c):\n    return 0\n"},
    "E122": {"a.policy": PLUGIN + "def f(x: int) -> int:\n    let y = x\n"},
    "E123": {"a.policy": PLUGIN + "on job_pipelined(job):\n    return 1\n"},
    "E124": {"a.policy": PLUGIN + "on may_reclaim_from(reclaimer, jobs) = reclaimer.priority > 0\n\n"
                         "on may_reclaim_from_reads_queue = true\n"},
    "E130": {"a.policy": PLUGIN + "let A = 1\nlet A = 2\n"},
    "E131": {"a.policy": PLUGIN + "arg n: int = 1\n\non open:\n    n = 2\n"},
    "E132": {"a.policy": PLUGIN + "def f(x: int) -> int = g(x)\ndef g(x: int) -> int = f(x)\n"},
    "E133": {"a.policy": PLUGIN + "on open:\n    let a = 1 when true\n"},
    "E134": {"a.policy": PLUGIN + "let A = fn() => B\nlet B = 3\n"},
    "E140": {"a.policy": PLUGIN + "arg who: Task\n"},
    "E141": {"a.policy": PLUGIN + "on job_ready(job) = len(job.tasks_in(\"Runing\")) > 0\n"},
    "E150": {"a.policy": PLUGIN + "use nowhere\n"},
    "E151": {"a.policy": "module a\n\nuse b\n", "b.policy": "module b\n\nuse a\n"},
    "W200": {"a.policy": PLUGIN + "arg unused: int = 1\n"},
    "W201": {"a.policy": PLUGIN + "def helper() -> int = 1\n"},
    "W202": {"a.policy": PLUGIN + "let LIMIT = 1\n\non open:\n    let LIMIT = 2\n    let b = LIMIT\n"},
    "W204": {"a.policy": PLUGIN + "on open:\n    1 + 2\n"},
    "W210": {"a.policy": PLUGIN + "on reclaimable(r, cs):\n    for c in cs:\n"
                                  "        victim c when c.status == \"Running\" and c.status == \"Pending\"\n"},
    "W230": {"a.policy": PLUGIN + "state seen: int\n\non predicate(task, node):\n    seen = seen + 1\n"},
    "C000": {"volcano-scheduler.conf": "actions: [unclosed\n"},
    "C001": {"volcano-scheduler.conf": "- actions\n"},
    "C002": {"volcano-scheduler.conf": "actions: allocate\nteirs: []\n"},
    "C003": {"volcano-scheduler.conf": "actions: allocate\ntiers: 5\n"},
    "C004": {"volcano-scheduler.conf": "actions: reclaim\ntiers:\n- plugins:\n  - {name: gang, enabledReclaimable: true}\n"},
    "C005": {"volcano-scheduler.conf": "actions: allocate\ntiers:\n- plugins:\n  - {name: gang, enableJobOrder: 1}\n"},
    "C010": {"volcano-scheduler.conf": "actions: allocate\ntiers:\n- plugins:\n"
                                       "  - {name: binpack, arguments: {binpack.wieght: 2}}\n"},
    "C011": {"b/bundle.yaml": BUNDLE + "sources: [p.policy]\nactions: [allocate]\ntiers:\n- plugins:\n  - {name: x}\n",
             "b/p.policy": PLUGIN + "arg limit: int\n\non overused(queue) = queue.weight > limit\n"},
    "C012": {"volcano-scheduler.conf": "actions: allocate\ntiers:\n- plugins:\n"
                                       "  - {name: binpack, arguments: {binpack.weight: heavy}}\n"},
    "C020": {"volcano-scheduler.conf": "actions: enqueue, alocate\ntiers: []\n"},
    "C021": {"volcano-scheduler.conf": "actions: allocate\ntiers:\n- plugins:\n  - {name: gangg}\n"},
    "C022": {"volcano-scheduler.conf": "actions: allocate\ntiers:\n- plugins:\n  - {name: proportion}\n"
                                       "  - {name: drf, enableHierarchy: true}\n"},
    "C030": {"volcano-scheduler.conf": "actions: allocate\ntiers:\n- plugins:\n  - {name: gang}\n"
                                       "- plugins:\n  - {name: gang}\n"},
    "C031": {"b/bundle.yaml": BUNDLE + "sources: [g.policy]\nactions: [reclaim]\ntiers:\n"
                              "- plugins: [{name: g}]\n- plugins: [{name: drf}]\n",
             "b/g.policy": "plugin g\n\non reclaimable(r, cs):\n    victim when priority < 10\n"},
    "C032": {"b/bundle.yaml": BUNDLE + "sources: [g.policy]\nactions: [reclaim]\ntiers:\n"
                              "- plugins: [{name: gang}, {name: g}]\n- plugins: [{name: drf}]\n"
                              "hooks:\n  reclaimable: {combine: intersect-all}\n",
             "b/g.policy": "plugin g\n\non reclaimable(r, cs):\n    victim when priority < 10\n"},
    "C033": {"b/bundle.yaml": BUNDLE + "sources: [g.policy]\nactions: [gangreclaim]\ntiers:\n"
                              "- plugins: [{name: g}]\n",
             "b/g.policy": "plugin g\n\non reclaimable(r, cs):\n    victim when priority < 10\n"},
    "B000": {"b/bundle.yaml": BUNDLE + "tiers: [\n"},
    "B001": {"b/bundle.yaml": BUNDLE + "acitons: [allocate]\n"},
    "B002": {"b/bundle.yaml": BUNDLE + "sources: [plugins/*.policy]\n"},
    "B010": {"b/bundle.yaml": BUNDLE + "hooks:\n  reclaimables: {combine: intersect}\n"},
    "B011": {"b/bundle.yaml": BUNDLE + "hooks:\n  reclaimable: {combine: intersekt}\n"},
    "B012": {"b/bundle.yaml": BUNDLE + "hooks:\n  job_order: {combine: sum}\n"},
    "B013": {"b/bundle.yaml": BUNDLE + "actions: [reclaim]\ntiers:\n- plugins: [{name: gang}]\n"
                              "hooks:\n  reclaimable: {combine: veto, vetoes: [gnag]}\n"},
    "K001": {"cluster.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: [\n"},
    "K002": {"cluster.yaml": NODE + "---\napiVersion: v1\nkind: Nod\nmetadata: {name: n2}\n"},
    "K003": {"cluster.yaml": NODE.replace("'2'", "'two'")},
    "K004": {"cluster.yaml": "apiVersion: v1\nkind: Node\nmetadata: {}\n"},
    "K005": {"cluster.yaml": "apiVersion: v1\nkind: List\nitems: [5]\n"},
    "K006": {"cluster.yaml": NODE + "---\n" + NODE},
    "K101": {"cluster.yaml": "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                             "metadata: {name: pg, namespace: ns}\nspec: {queue: nowhere, minMember: 1}\n"},
    "K102": {"cluster.yaml": POD},
    "K007": {"cluster.yaml": "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
                             "spec: {minMember: x}\n"},
    "K103": {"cluster.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p1\n  namespce: ml\n"
                             "spec: {containers: [{name: c}]}\nstatus: {phase: Pending}\n"},
    "K104": {"cluster.yaml": HYPERNODE.format(name="rack1", tier=1, kind="Node", member="n9")},
    "K105": {"cluster.yaml": "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: dev}\n"
                             "spec: {weight: 1, preemptable: false}\n"},
    "K106": {"cluster.yaml": NODE + "---\napiVersion: nodeinfo.volcano.sh/v1alpha1\nkind: Numatopology\n"
                             "metadata: {name: n9}\nspec:\n  policies: {CPUManagerPolicy: static}\n"},
    "K111": {"cluster.yaml": "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: rack1}\n"
                             "spec: {tier: 1, members: []}\n---\n"
                             + HYPERNODE.format(name="spine1", tier=2, kind="HyperNode", member="rack1") + "---\n"
                             + HYPERNODE.format(name="spine2", tier=2, kind="HyperNode", member="rack1")},
    "K112": {"cluster.yaml": HYPERNODE.format(name="spine1", tier=2, kind="HyperNode", member="rack7")},
    "O001": {"b/bundle.yaml": BUNDLE + "schedulerOptions: {percentage-node-to-find: 1}\n"},
    "O002": {"b/bundle.yaml": BUNDLE + "schedulerOptions: {node-selector: [linux]}\n"},
    "O003": {"b/bundle.yaml": BUNDLE + "schedulerOptions: {schedule-period: 1s}\n"},
    "S001": {"case.yaml": "expect: {binds: {}\n"},
    "S002": {"case.yaml": "name: no-config\nexpect: {}\n"},
    "S006": {"case.yaml": "name: typo\nscheduler: {actions: allocate, tiers: [{plugins: [{name: gang}]}]}\n"
                          "objects: []\nexpect:\n  bindz: {}\n"},
    "S030": {"case.yaml": "scheduler: {actions: allocate, tiers: []}\nprocessState: {startIndex: 1}\nexpect: {}\n"},
    "F001": {"a.policy": b"plugin x\n\xff\xfe\n"},
    "F003": {"notes.txt": "hello\n"},
}

# What each code's diagnostic says and where (file under the test's folder, line, column, message;
# "{tmp}" stands for the test's folder): all of it pinned.
EXPECTED: dict[str, tuple[str, int | None, int | None, str]] = {
    "B000": ("b/bundle.yaml", 5, 1, "malformed YAML: did not find expected node content (while parsing a flow node)"),
    "B001": ("b/bundle.yaml", 4, 1, "unknown key 'acitons' at (top level)"),
    "B002": ("b/bundle.yaml", 4, 11, "source 'plugins/*.policy' matches no file"),
    "B010": ("b/bundle.yaml", 5, 3, "unknown session function 'reclaimables' in hooks"),
    "B011": ("b/bundle.yaml", 5, 26, "unknown combinator 'intersekt' for 'reclaimable'"),
    "B012": ("b/bundle.yaml", 5, 24, "combinator 'sum' cannot combine 'job_order' (order hook)"),
    "B013": ("b/bundle.yaml", 8, 41, "'gnag' vetoes but is not listed in the tiers"),
    "C000": ("volcano-scheduler.conf", 2, 1, "malformed YAML: did not find expected ',' or ']' (while parsing a "
        "flow sequence)"),
    "C001": ("volcano-scheduler.conf", 1, 1, "a scheduler configuration must be a mapping"),
    "C002": ("volcano-scheduler.conf", 2, 1, "unknown configuration key 'teirs'"),
    "C003": ("volcano-scheduler.conf", 2, 8, "tiers must be a list of {plugins: [...]}"),
    "C004": ("volcano-scheduler.conf", 4, 18, "unknown plugin switch 'enabledReclaimable' on plugin 'gang'"),
    "C005": ("volcano-scheduler.conf", 4, 34, "switch 'enableJobOrder' must be true or false, not 1"),
    "C010": ("volcano-scheduler.conf", 4, 33, "plugin 'binpack' has no argument 'binpack.wieght'; it is ignored"),
    "C011": ("b/bundle.yaml", 8, 5, "plugin 'x' needs argument 'limit' (int)"),
    "C012": ("volcano-scheduler.conf", 4, 49, "argument 'binpack.weight' of plugin 'binpack' must be an int, not "
        "'heavy'; the default 1 is used"),
    "C020": ("volcano-scheduler.conf", 1, 10, "unknown action 'alocate'"),
    "C021": ("volcano-scheduler.conf", 4, 5, "unknown plugin 'gangg'"),
    "C022": ("volcano-scheduler.conf", 4, 5, "proportion and drf with enableHierarchy cannot share a tier (Volcano "
        "rejects this configuration)"),
    "C030": ("volcano-scheduler.conf", 6, 5, "plugin 'gang' is listed twice (also in tier 1)"),
    "C031": ("b/bundle.yaml", 7, 13, "plugin 'g' answers reclaimable, combined by Volcano's tiered intersect: an "
        "empty answer lets the next tier decide, so it cannot protect a task"),
    "C032": ("b/bundle.yaml", 10, 3, "intersect-all on reclaimable also intersects tier 2's drf, which Volcano "
        "never asks once tier 1 has decided: fewer victims than Volcano takes"),
    "C033": ("b/bundle.yaml", 5, 10, "action 'gangreclaim' evicts without asking reclaimable: plugin 'g''s rule "
        "does not hold there"),
    "E100": ("a.policy", 4, 13, "unknown name 'nope'"),
    "E101": ("a.policy", 3, 28, "unknown attribute 'reclaimble' of Queue"),
    "E102": ("a.policy", 3, 25, "unknown method 'ready_now' of Job"),
    "E103": ("a.policy", 3, 10, "unknown type 'Thing'"),
    "E104": ("a.policy", 3, 4, "unknown hook 'job_ordr'"),
    "E105": ("a.policy", 4, 13, "'len' can only be called"),
    "E110": ("a.policy", 4, 18, "'a' has type string, expected int"),
    "E111": ("a.policy", 4, 13, "'len' takes 1 argument(s), got 2"),
    "E112": ("a.policy", 4, 22, "'len' takes no keyword arguments"),
    "E113": ("a.policy", 3, 35, "'priority' is read from a value that may be none (type Job?)"),
    "E120": ("a.policy", 5, 9, "`victim` is not allowed in hook 'job_pipelined' (vote)"),
    "E121": ("a.policy", 3, 4, "hook 'job_order' takes 2 parameter(s) (Job, Job), not 3"),
    "E122": ("a.policy", 3, 5, "'f' must return a int on every path"),
    "E123": ("a.policy", 4, 12, "hook 'job_pipelined' (vote) does not return a value"),
    "E124": ("a.policy", 3, 40, "'may_reclaim_from_reads_queue' is always true, but 'may_reclaim_from' reads "
        "'reclaimer' beyond its queue"),
    "E130": ("a.policy", 4, 1, "'A' is already defined (line 3)"),
    "E131": ("a.policy", 6, 5, "'n' cannot be assigned (arguments and constants are fixed)"),
    "E132": ("a.policy", 3, 5, "recursion is not allowed: f -> g -> f"),
    "E133": ("a.policy", 4, 5, "`let` cannot be guarded by `when`"),
    "E134": ("a.policy", 3, 17, "constant 'B' is used before its declaration (line 4)"),
    "E140": ("a.policy", 3, 10, "argument type must be one of int, float, bool, string, duration, quantity, list[string] or "
        "map[string, T] of those, not Task"),
    "E141": ("a.policy", 3, 38, "'Runing' is not a TaskStatus (one of 'Pending', 'Allocated', 'Pipelined', "
        "'Binding', 'Bound', 'Running', 'Releasing', 'Succeeded', 'Failed', 'Unknown')"),
    "E150": ("a.policy", 3, 1, "unknown module 'nowhere'"),
    "E151": ("a.policy", 3, 1, "modules cannot use each other: 'a' uses 'b', which uses 'a'"),
    "F001": ("a.policy", 2, 1, "cannot read {tmp}/a.policy: not UTF-8 text (byte 0xff: invalid start byte)"),
    "F003": ("notes.txt", None, None, "not a policy file, bundle, scheduler configuration, scenario or cluster dump"),
    "K001": ("cluster.yaml", 4, 1, "malformed YAML: did not find expected node content (while parsing a flow node)"),
    "K002": ("cluster.yaml", 7, 7, "unknown kind 'Nod'"),
    "K003": ("cluster.yaml", 4, 29, "bad quantity in Node n1.status.allocatable.cpu: 'two' is not a Kubernetes "
        "quantity (e.g. '500m', '2', '4Gi', '1e3')"),
    "K004": ("cluster.yaml", 1, 1, "Node has no metadata.name"),
    "K005": ("cluster.yaml", 3, 9, "expected a Kubernetes object (a mapping with apiVersion and kind)"),
    "K006": ("cluster.yaml", 8, 11, "duplicate Node n1"),
    "K007": ("cluster.yaml", 4, 19, "spec.minMember of PodGroup pg must be an integer, not 'x'"),
    "K101": ("cluster.yaml", 4, 1, "PodGroup pg names queue 'nowhere', which does not exist: Volcano leaves the "
        "group out of the session"),
    "K102": ("cluster.yaml", 3, 1, "Pod ns/p1 names PodGroup 'nogroup', which does not exist: Volcano does not "
        "schedule it"),
    "K103": ("cluster.yaml", 5, 3, "unknown field 'metadata.namespce' in Pod p1: fumarole ignores it"),
    "K104": ("cluster.yaml", 7, 5, "HyperNode rack1 has member node 'n9', which is not in the cluster: Volcano "
        "leaves it out"),
    "K105": ("cluster.yaml", 4, 19, "field 'spec.preemptable' of Queue dev is not in Volcano's Queue API: "
        "Volcano's plugins ignore it, a policy reads it as queue.spec['preemptable']"),
    "K106": ("cluster.yaml", 8, 1, "Numatopology n9 names no node of the cluster: Volcano leaves it out"),
    "K111": ("cluster.yaml", 20, 5, "HyperNode rack1 is a member of both spine1 and spine2: a HyperNode has one "
        "parent"),
    "K112": ("cluster.yaml", 7, 5, "HyperNode spine1 has member HyperNode 'rack7', which does not exist: Volcano "
        "keeps an empty placeholder of that name (tier 0, no nodes)"),
    "O001": ("b/bundle.yaml", 4, 20, "unknown scheduler option percentage-node-to-find"),
    "O002": ("b/bundle.yaml", 4, 36, "node-selector entry 'linux' is not name:value (Volcano would ignore it)"),
    "O003": ("b/bundle.yaml", 4, 20, "Volcano's schedule-period is not modelled: it does not change decisions"),
    "P001": ("a.policy", 4, 15, "unexpected character '@'"),
    "P002": ("a.policy", 5, 1, "inconsistent indentation: Unexpected dedent to column 4. Expected dedent to 0"),
    "P007": ("a.policy", 3, 4097, "this line has 5,010 characters; a line (and so a string literal) may have at "
        "most 4,096"),
    "S001": ("case.yaml", 2, 1, "malformed YAML: did not find expected ',' or '}' (while parsing a flow mapping)"),
    "S002": ("case.yaml", 1, 1, "a scenario needs `scheduler` or `bundle`"),
    "S006": ("case.yaml", 5, 3, "unknown key 'bindz' in `expect`"),
    "S030": ("case.yaml", 2, 16, "unknown processState key 'startIndex'"),
    "W200": ("a.policy", 3, 1, "argument 'unused' is never used"),
    "W201": ("a.policy", 3, 5, "definition 'helper' is never used"),
    "W202": ("a.policy", 6, 5, "'LIMIT' shadows an outer name"),
    "W204": ("a.policy", 4, 5, "this expression's value is not used"),
    "W210": ("a.policy", 5, 23, "this condition can never be true: `c.status == \"Running\"` and `c.status == "
        "\"Pending\"` cannot both hold"),
    "W230": ("a.policy", 6, 5, "'predicate' has no batch form: an assignment to state 'seen' has an effect"),
}


@pytest.mark.parametrize("code", sorted(TRIGGERS))
def test_each_code_from_a_real_input(cli, tmp_path, code):
    write(tmp_path, TRIGGERS[code])
    targets = [str(tmp_path / name) for name in TRIGGERS[code] if "/" not in name] + \
        sorted({str(tmp_path / name.split("/")[0]) for name in TRIGGERS[code] if "/" in name})
    strict = ["--strict"] if code in STRICT_ONLY else []
    status, report = check_json(cli, *strict, *targets)
    assert code in codes(report), report["diagnostics"]
    diag = next(d for d in report["diagnostics"] if d["code"] == code)
    assert (str(Path(diag["file"]).relative_to(tmp_path)), diag["line"], diag["column"],
            diag["message"].replace(str(tmp_path), "{tmp}")) == EXPECTED[code]
    assert status == (2 if code.startswith("F") else 1 if diag["severity"] == "error" else 0)


# The trace and sweep codes, from `fumarole replay` and `fumarole sweep`: the first line of what each
# prints is pinned whole (file:line:column, code, message).
SWEEP_OF_TEN_BILLION = ("kind: Sweep\ntraces: [t.yaml]\nbundles: [b]\ngrid:\n  a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                        + "".join(f"  {key}: *a\n" for key in "bcdefghij"))
TRACE_TRIGGERS: dict[str, tuple[list[str], dict[str, str | bytes], str]] = {
    "T001": (["replay", "t.yaml", "--out", "out"], {"t.yaml": "kind: Trace\nevents: [\n"},
             "t.yaml:3:1: error[T001]: malformed YAML: did not find expected node content (while parsing a flow node)"),
    "T002": (["replay", "t.yaml", "--out", "out"], {"t.yaml": "kind: Trace\nfoo: 1\n"},
             "t.yaml:2:1: error[T002]: unknown trace key 'foo'"),
    "T003": (["replay", "t.yaml", "--out", "out"],
             {"t.yaml": "kind: Trace\nevents:\n- at: 10 minutes\n  delete: research/sweep\n"},
             "t.yaml:3:7: error[T003]: event 0: at must be a duration (\"90s\", \"1h30m\") or a number of seconds, "
             "at most 100 years, not '10 minutes'"),
    "T004": (["sweep", "sweep.yaml", "--out", "out"], {"sweep.yaml": SWEEP_OF_TEN_BILLION},
             "sweep.yaml:5:3: error[T004]: the sweep asks for 10,000,000,000 replays (traces x bundles x grid points), "
             "more than 10,000 (fumarole's limit)"),
}


@pytest.mark.parametrize("code", sorted(TRACE_TRIGGERS))
def test_each_trace_and_sweep_code_from_a_real_input(cli, tmp_path, monkeypatch, code):
    argv, files, headline = TRACE_TRIGGERS[code]
    monkeypatch.chdir(tmp_path)
    write(tmp_path, files)
    result = cli(*argv)
    assert (result.code, result.out, result.err.splitlines()[0]) == (2, "", headline)


# The codes no input to `fumarole check` reaches (archives and signatures, the service's state, running
# policies, files and the command line, the cluster checks a session makes) and the parser and checker
# codes the policy files of tests/language/ pin: each is pinned -- code, file, line and column where
# it has one, and the whole message -- from a real input by the test (or the language file) named here.
PINNED_ELSEWHERE: dict[str, str] = {
    "A001": "tests/test_artifacts.py::test_each_size_limit_is_a001",
    "A002": "tests/test_artifacts.py::test_garbage_is_a002",
    "A004": "tests/test_artifacts.py::test_unsafe_member_names_are_a004",
    "A005": "tests/test_artifacts.py::test_links_and_special_files_are_a005",
    "A006": "tests/test_artifacts.py::test_a_member_twice_is_a006",
    "A007": "tests/test_artifacts.py::test_each_manifest_problem_is_a007",
    "A008": "tests/test_artifacts.py::test_missing_and_unlisted_files_are_a008",
    "A009": "tests/test_artifacts.py::test_a_file_changed_after_build_is_a009",
    "A010": "tests/test_artifacts.py::test_a_manifest_digest_that_does_not_match_its_files_is_a010",
    "A011": "tests/test_artifacts.py::test_a_file_where_a_folder_must_be_is_a011",
    "A020": "tests/test_artifacts.py::test_no_bundle_yaml_is_a020_in_a_folder_and_in_an_archive",
    "A021": "tests/test_artifacts.py::test_a_symlinked_folder_is_a021",
    "A022": "tests/test_artifacts.py::test_source_globs_that_leave_the_bundle_are_a022",
    "A030": "tests/test_artifacts.py::test_keys_that_cannot_sign_or_verify_are_a030",
    "A031": "tests/test_artifacts.py::test_sign_then_verify_with_the_right_key_only",
    "A032": "tests/test_artifacts.py::test_a_signature_that_is_not_base64_is_a032",
    "A033": "tests/test_artifacts.py::test_a_signature_moved_to_another_bundle_is_a032_and_a_forged_one_a033",
    "E142": "tests/language/expressions.policy",
    "E160": "tests/language/victim_rules.policy",
    "E161": "tests/language/victim_rules.policy",
    "W220": "tests/language/victim_rules.policy",
    "P003": "tests/language/syntax_escape.policy",
    "P004": "tests/language/syntax_number.policy",
    "P005": "tests/language/syntax_nesting.policy",
    "P006": "tests/language/syntax_reserved.policy",
    "F002": "tests/test_check.py::test_no_such_path_is_a_usage_error",
    "F004": "tests/test_check.py::test_internal_error_is_reported_not_raised",
    "F005": "tests/test_file_and_scenario_codes.py::test_a_live_cluster_that_refuses_is_f005_naming_the_kubeconfig",
    "F006": "tests/test_file_and_scenario_codes.py::test_a_missing_extra_is_f006",
    "K008": "tests/test_strict_cluster_input.py::test_a_cluster_with_no_object_is_refused",
    "K110": "tests/test_lifecycle.py::test_open_session_places_the_problem_in_the_cluster_file",
    "K113": "tests/test_hypernodes.py::test_a_cycle_is_reported_once_as_k113",
    "K107": "tests/test_sharding.py::test_without_its_node_shard_a_sharded_scheduler_has_no_shard_and_is_warned",
    "R001": "tests/test_check.py::test_runtime_failure_is_r001",
    "S003": "tests/test_server.py::test_state_folder_problems_are_diagnostics",
    "S004": "tests/test_server.py::test_state_folder_problems_are_diagnostics",
    "S005": "tests/test_server.py::test_crash_before_rename_keeps_the_old_bundle",
    "S010": "tests/test_server.py::test_activate_rollback_and_failures_keep_the_old_bundle",
    "S020": "tests/test_server.py::test_nothing_valid_to_serve_is_s020",
}


def test_every_code_is_pinned_from_a_real_input():
    """Every code of the catalogue is pinned exactly once: here from `fumarole check` (TRIGGERS), here
    from replay and sweep (TRACE_TRIGGERS), or by the test named in PINNED_ELSEWHERE, which must exist
    and name the code."""
    tables = (set(TRIGGERS), set(TRACE_TRIGGERS), set(PINNED_ELSEWHERE))
    assert sorted(set(CODES) - set().union(*tables)) == []
    assert sum(len(t) for t in tables) == len(set().union(*tables)), "a code is pinned in two tables"
    for code, where in PINNED_ELSEWHERE.items():
        file, _, test = where.partition("::")
        text = (ROOT / file).read_text()
        if test:  # the test with its decorators: the top-level block that defines it
            block = [b for b in re.split(r"\n\n\n(?=\S)", text) if re.search(rf"^def {test}\(", b, re.MULTILINE)]
            assert len(block) == 1 and code in block[0], where
        else:
            assert re.search(rf"#\s*{code} @\d+: ", text), where


def test_strict_only_codes_need_strict(cli, tmp_path):
    write(tmp_path, TRIGGERS["W200"])
    _, report = check_json(cli, str(tmp_path))
    assert "W200" not in codes(report)


def placed(report: dict, folder: Path) -> list[tuple[str, str, int | None, int | None, str]]:
    """Each diagnostic as (code, file under ``folder``, line, column, message): all of it pinned."""
    return [(d["code"], str(Path(d["file"]).relative_to(folder)), d["line"], d["column"], d["message"])
            for d in report["diagnostics"]]


def test_no_such_path_is_a_usage_error(cli, tmp_path):
    status, report = check_json(cli, str(tmp_path / "missing.policy"))
    assert status == 2
    assert placed(report, tmp_path) == [
        ("F002", "missing.policy", None, None, f"no such file or folder: {tmp_path / 'missing.policy'}")]


def test_internal_error_is_reported_not_raised(cli, tmp_path, monkeypatch):
    import fumarole.runtime.authoring.check

    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(fumarole.runtime.authoring.check, "load_cluster", broken)
    write(tmp_path, {"cluster.yaml": NODE, "a.policy": TRIGGERS["E101"]["a.policy"]})
    status, report = check_json(cli, str(tmp_path))
    assert status == 2 and {"F004", "E101"} <= codes(report)
    assert [d for d in placed(report, tmp_path) if d[0] == "F004"] == [
        ("F004", "cluster.yaml", None, None, "internal error while checking: ValueError: boom")]


def test_runtime_failure_is_r001(cli, tmp_path):
    write(tmp_path, {
        "b/bundle.yaml": BUNDLE + "sources: [p.policy]\nactions: [allocate]\ntiers:\n- plugins:\n  - {name: x}\n",
        "b/p.policy": PLUGIN + "on open:\n    let m: map[string, int] = {}\n    let v = m[\"missing\"]\n",
    })
    result = cli("run", str(ROOT / "examples" / "cluster.yaml"), "--bundle", str(tmp_path / "b"))
    assert result.code == 2 and "Traceback" not in result.err
    assert f"{tmp_path / 'b' / 'p.policy'}:5:5: error[R001]: policy failed while running: KeyError: 'missing'" \
        in result.err.splitlines()


# -- hints and places ------------------------------------------------------------------------------

def test_misspelt_attribute_suggests_the_right_one(cli, tmp_path):
    write(tmp_path, TRIGGERS["E101"])
    _, report = check_json(cli, str(tmp_path))
    (diag,) = report["diagnostics"]
    assert "unknown attribute 'reclaimble' of Queue" in diag["message"]
    assert diag["hint"] == "did you mean 'reclaimable'?"


def test_misspelt_switch_suggests_volcano_spelling(cli, tmp_path):
    write(tmp_path, TRIGGERS["C004"])
    _, report = check_json(cli, str(tmp_path))
    (diag,) = report["diagnostics"]
    assert (diag["line"], diag["column"]) == (4, 18)
    assert diag["hint"] == "did you mean 'enableReclaimable'?"


def test_manifest_schema_error_points_at_the_yaml_key(cli, tmp_path):
    write(tmp_path, TRIGGERS["B001"])
    _, report = check_json(cli, str(tmp_path / "b"))
    (diag,) = report["diagnostics"]
    assert (diag["line"], diag["column"]) == (4, 1)
    assert diag["hint"] == "did you mean 'actions'?"


def test_text_output_has_caret_excerpt_and_hint(cli, tmp_path):
    write(tmp_path, TRIGGERS["E101"])
    result = cli("check", str(tmp_path))
    lines = result.out.splitlines()
    assert re.match(r".*a\.policy:3:28: error\[E101\]: unknown attribute 'reclaimble' of Queue$", lines[0])
    assert lines[1].endswith("on overused(queue) = queue.reclaimble")
    assert lines[2].strip() == "^" * len("reclaimble")
    assert lines[3] == "  hint: did you mean 'reclaimable'?"
    assert lines[-1] == "checked 1 file: 1 error, 0 warnings"


def test_a_bundle_reports_every_stage_in_one_run(cli, tmp_path):
    write(tmp_path, {
        "b/bundle.yaml": BUNDLE + "sources: [plugins/*.policy]\nactions: [allocate, reclam]\ntiers:\n- plugins:\n"
                       "  - {name: gang, enabledReclaimable: true}\n  - {name: nosuch}\n  - {name: broken}\n"
                       "  - {name: mine, arguments: {limit: x}}\nhooks:\n  reclaimable: {combine: intersekt}\n",
        "b/plugins/mine.policy": "plugin mine\n\narg limit: int\n\non overused(queue) = queue.weight > limit\n",
        "b/plugins/broken.policy": "plugin broken\n\non overused(queue) = queue.wieght >\n",
    })
    status, report = check_json(cli, str(tmp_path / "b"))
    assert status == 1
    assert codes(report) == {"C020", "C004", "C021", "C012", "B011", "P001"}
    # the plugin whose file does not parse is not also an "unknown plugin"
    assert not any("broken" in d["message"] for d in report["diagnostics"] if d["code"] == "C021")


def test_a_policy_inside_a_bundle_is_checked_in_its_bundle(cli):
    status, report = check_json(cli, str(ROOT / "examples" / "site-min-runtime" / "plugins" / "min_runtime.policy"))
    assert status == 0 and any(f.endswith("bundle.yaml") for f in report["files"])


# -- broken copies of our own policies ----------------------------------------------------------------

def broken_copy(tmp_path: Path, name: str, edit) -> Path:
    source = STDLIB / name
    target = tmp_path / Path(name).name
    lines = source.read_text().splitlines(keepends=True)
    target.write_text("".join(edit(lines)))
    return target


def test_garbage_on_a_line(cli, tmp_path):
    path = broken_copy(tmp_path, "plugins/proportion.policy",
                       lambda ls: ls[:29] + ["    $$ garbage $$\n"] + ls[29:])
    status, report = check_json(cli, str(path))
    assert status == 1
    assert [(d["code"], d["line"]) for d in report["diagnostics"]] == [("P001", 30)]


def test_file_truncated_mid_rule(cli, tmp_path):
    original = (STDLIB / "plugins/gang.policy").read_text()
    cut = original.index("spare[job] -= 1") + len("spare[job] -=")  # an assignment without its value
    path = tmp_path / "gang.policy"
    path.write_text(original[:cut])
    status, report = check_json(cli, str(path))
    assert status == 1
    (diag,) = report["diagnostics"]
    assert diag["code"] == "P001" and diag["line"] == original[:cut].count("\n") + 1


def test_misspelt_attribute_in_our_reclaim_action(cli, tmp_path):
    path = broken_copy(tmp_path, "actions/reclaim.policy",
                       lambda ls: [l.replace("queue.reclaimable", "queue.reclaimble") for l in ls])
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "reclaimble" in l)
    status, report = check_json(cli, str(path))
    assert status == 1
    (diag,) = report["diagnostics"]
    assert (diag["code"], diag["line"], diag["hint"]) == ("E101", line, "did you mean 'reclaimable'?")


def test_two_broken_files_in_one_run(cli, tmp_path):
    one = broken_copy(tmp_path, "plugins/drf.policy", lambda ls: ls[:10] + ["%%%\n"] + ls[10:])
    two = broken_copy(tmp_path, "plugins/priority.policy",
                      lambda ls: [l.replace("job.priority", "job.priorty") for l in ls])
    status, report = check_json(cli, str(one), str(two))
    assert status == 1
    assert {(Path(d["file"]).name, d["code"]) for d in report["diagnostics"]} >= {
        ("drf.policy", "P001"), ("priority.policy", "E101")}


# -- output formats --------------------------------------------------------------------------------

@pytest.fixture
def two_problems(tmp_path) -> Path:
    write(tmp_path, {"a.policy": TRIGGERS["E101"]["a.policy"],
                     "b.policy": "plugin y\n\narg unused: int = 1\n\non open:\n    1 + 2\n"})
    return tmp_path


def test_json_format(cli, two_problems):
    status, report = check_json(cli, str(two_problems))
    assert status == 1
    assert report["summary"] == {"files": 2, "errors": 1, "warnings": 1, "failed": True}
    assert {d["code"] for d in report["diagnostics"]} == {"E101", "W204"}


def test_sarif_format(cli, two_problems):
    result = cli("check", "--format", "sarif", str(two_problems))
    sarif = json.loads(result.out)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["E101", "W204"]
    for res in run["results"]:
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning")
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["endColumn"] > region["startColumn"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]


def test_github_format(cli, two_problems):
    result = cli("check", "--format", "github", str(two_problems))
    commands = [l for l in result.out.splitlines() if l.startswith("::")]
    assert len(commands) == 2
    pattern = re.compile(r"^::(error|warning) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=[^:]+::.+$")
    assert all(pattern.match(c) for c in commands)
    assert any(c.startswith("::error ") and "line=3,col=28" in c and "%0Ahint: did you mean" in c for c in commands)


def test_junit_format(cli, two_problems):
    result = cli("check", "--format", "junit", "--fail-on", "warning", str(two_problems))
    assert result.code == 1
    suites = ET.fromstring(result.out)
    suite = suites.find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "2"
    assert {c.find("failure").get("type") for c in suite.iter("testcase")} == {"E101", "W204"}


def test_fail_on_warning(cli, tmp_path):
    write(tmp_path, TRIGGERS["W204"])
    assert cli("check", str(tmp_path)).code == 0
    assert cli("check", "--fail-on", "warning", str(tmp_path)).code == 1


def test_bad_option_is_a_usage_error(cli):
    assert cli("check", "--format", "xml", "policies").code == 2


# -- the project's own files -----------------------------------------------------------------------

def test_our_policies_and_examples_pass_strict(cli):
    status, report = check_json(cli, "--strict", str(ROOT / "policies"), str(ROOT / "examples"))
    assert report["diagnostics"] == [] and status == 0
    assert len(report["files"]) > 20


def _stdlib_names() -> tuple[set[str], set[str]]:
    """The names the standard library's policies declare (a file name may differ: network-topology-aware)."""
    declared = [re.match(r"(plugin|action)\s+([\w-]+)", p.read_text()) for p in STDLIB.rglob("*.policy")]
    names = [m.groups() for m in declared if m]
    return {n for kind, n in names if kind == "action"}, {n for kind, n in names if kind == "plugin"}


CASE_FILES = scenario_files([CASES]) if CASES.exists() else []


@pytest.mark.parametrize("path", CASE_FILES, ids=[str(p.relative_to(CASES)) for p in CASE_FILES])
def test_conformance_configurations_pass(cli, path):
    import yaml

    scheduler = (yaml.safe_load(path.read_text()) or {}).get("scheduler") or {}
    actions, plugins = _stdlib_names()
    wanted_actions = {a.strip() for a in str(scheduler.get("actions", "")).split(",") if a.strip()}
    wanted_plugins = {p.get("name") for tier in scheduler.get("tiers") or [] for p in tier.get("plugins") or []}
    missing = (wanted_actions - actions) | (wanted_plugins - plugins)
    if missing:
        pytest.skip(f"needs {', '.join(sorted(missing))}, not in the standard library yet")
    status, report = check_json(cli, str(path))
    assert [d for d in report["diagnostics"] if d["severity"] == "error"] == [] and status == 0


# -- the catalogue and its documentation --------------------------------------------------------------

def emitted_codes() -> set[str]:
    found = set()
    for folder in ("policy_lang", "runtime"):
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(re.findall(r"[\"']([A-Z]\d{3})[\"']", path.read_text()))
    return found


def test_every_emitted_code_is_in_the_catalogue():
    assert emitted_codes() - set(CODES) == set()


def test_every_code_is_documented_with_an_example():
    doc = (ROOT / "docs" / "diagnostics.md").read_text()
    sections = dict(re.findall(r"^### ([A-Z]\d{3})\b.*?\n(.*?)(?=^### |\Z)", doc, re.MULTILINE | re.DOTALL))
    missing = sorted(set(CODES) - set(sections))
    assert not missing, f"docs/diagnostics.md lacks {missing}"
    without_example = sorted(code for code, body in sections.items() if "```" not in body)
    assert not without_example, f"no example for {without_example}"


def test_examples_stay_clean_wherever_they_are(cli, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    status, report = check_json(cli, str(tmp_path / "examples"))
    assert status == 0, report["diagnostics"]


# -- the published schema ---------------------------------------------------------------------------

def test_schema_command_prints_a_self_contained_schema(cli):
    import jsonschema
    import yaml

    result = cli("schema")
    assert result.code == 0
    schema = json.loads(result.out)
    refs = re.findall(r'"\$ref": "([^"]+)"', result.out)
    assert refs and all(ref.startswith("#/") for ref in refs)
    validator = jsonschema.Draft202012Validator(schema)
    for manifest in ROOT.glob("examples/**/bundle.yaml"):
        assert list(validator.iter_errors(yaml.safe_load(manifest.read_text()))) == []
    bad = {"apiVersion": "fumarole/v1", "kind": "PolicyBundle", "metadata": {"name": "x"},
           "hooks": {"reclaimable": {"combine": "intersekt"}}}
    assert list(validator.iter_errors(bad))
    assert json.loads(cli("schema", "hooks").out)["title"] == "fumarole hook catalogue"


def test_an_argument_list_item_is_positioned_at_the_item(cli, tmp_path):
    """A list read item by item (`from "strategies" / * / "name"`) reports a bad item where it
    is written, as a bad field of an item is."""
    write(tmp_path, {"volcano-scheduler.conf": (
        "actions: allocate\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments:\n      strategies:\n"
        "      - name: lowNodeUtilization\n      - 5\n  - name: resource-strategy-fit\n    arguments:\n"
        "      resources:\n      - type: cpu\n        weight: heavy\n")})
    status, report = check_json(cli, str(tmp_path / "volcano-scheduler.conf"))
    assert status == 1
    # resource-strategy-fit reads `resources` with framework.Get into a map: mapstructure decodes no
    # list into one and Volcano exits, so the list is refused where it starts, not item by item.
    assert placed(report, tmp_path) == [
        ("C012", "volcano-scheduler.conf", 8, 9,
         "argument 'strategies/1' of plugin 'rescheduling' must be a mapping, not 5; the entry is left out"),
        ("C012", "volcano-scheduler.conf", 12, 7,
         "argument 'resources' of plugin 'resource-strategy-fit' must be a mapping, not [{'type': 'cpu', "
         "'weight': 'heavy'}]")]
    assert [d["severity"] for d in report["diagnostics"]] == ["warning", "error"]


def test_rules_that_can_never_match(tmp_path):
    from fumarole.policy_lang.lint import never_matching
    from fumarole.policy_lang.parser import parse

    source = PLUGIN + (
        "on reclaimable(r, cs):\n"
        "    for c in cs:\n"
        "        victim c when c.preemptable and not c.preemptable\n"                      # 5: x and not x
        "        victim c when c.pod_priority > 10 and c.pod_priority <= 10\n"            # 6: empty range
        "        victim c when c.status != \"Running\" and c.status == \"Running\"\n"     # 7
        "        if c.status == \"Running\":\n"
        "            pass\n"
        "        elif c.status == \"Running\":\n"                                         # 10: decided earlier
        "            pass\n"
        "        victim c when c.pod_priority > 1 and c.pod_priority < 5\n"               # fine
        "        victim c when c.status == \"Running\" or c.status == \"Pending\"\n"      # fine
        "        victim c when c.job != none and c.job.priority > 1\n"                    # fine
        "        if c.preemptable:\n"
        "            pass\n"
        "        elif c.pod_priority > 3:\n"                                              # fine
        "            pass\n")
    lines = sorted(d.span.line for d in never_matching(parse(source, "x.policy")))
    assert lines == [5, 6, 7, 10]

"""Loading builds each pod's task and each node once; sessions get copies that behave as new ones."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.runtime.api.model import Node, Task
from fumarole.runtime.api.resource import Resource
from fumarole.runtime.ingest.kube import cluster_from_objects
from fumarole.runtime.ingest.kube_convert import task_from_pod

ROOT = Path(__file__).resolve().parent.parent

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p-1", "namespace": "ns", "uid": "u1", "labels": {"app": "a"},
                    "annotations": {"scheduling.k8s.io/group-name": "g", "volcano.sh/task-spec": "worker"}},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
                "priority": 7, "nodeName": "n1"},
       "status": {"phase": "Running"}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "z"}},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "images": [{"names": ["img"]}]}}


def _fields(obj: object, slots: tuple[str, ...]) -> dict:
    out = {}
    for name in slots:
        if name == "__weakref__":
            continue
        value = getattr(obj, name)
        out[name] = value.to_dict() if isinstance(value, Resource) else value
    return out


def test_a_session_copy_of_a_task_is_the_task_its_pod_makes():
    loaded = task_from_pod(POD)
    loaded.status, loaded.derived["x"] = "Pipelined", 1  # what a session does to its own copy
    fresh = task_from_pod(POD)
    copy = task_from_pod(POD).for_session()
    assert _fields(copy, Task.__slots__) == _fields(fresh, Task.__slots__)


def test_a_session_copy_shares_nothing_a_session_changes():
    loaded = task_from_pod(POD)
    copy = loaded.for_session()
    copy.request.add(Resource(1000))
    copy.labels["new"] = "x"
    copy.derived["y"] = 2
    assert loaded.request.milli_cpu == 500 and "new" not in loaded.labels and loaded.derived == {}
    assert copy.pod is loaded.pod


def test_a_session_copy_of_a_node_starts_empty_as_loaded():
    cluster = cluster_from_objects([NODE, POD])
    first = cluster.snapshot().nodes["n1"]
    assert first.tasks and first.idle.milli_cpu == 3500
    second = cluster.snapshot().nodes["n1"]
    assert second is not first and second.idle.milli_cpu == 3500 and list(second.tasks) == ["ns/p-1"]
    assert second.labels == {"zone": "z"} and second.labels is not first.labels
    assert isinstance(second, Node) and second.taints == NODE["spec"]["taints"]


def test_each_snapshot_has_its_own_tasks():
    cluster = cluster_from_objects([NODE, POD])
    one, two = cluster.snapshot(), cluster.snapshot()
    task_one = one.nodes["n1"].tasks["ns/p-1"]
    task_two = two.nodes["n1"].tasks["ns/p-1"]
    assert task_one is not task_two
    task_one.status = "Releasing"
    assert task_two.status == "Running"


def test_a_repeated_resource_list_gives_vectors_of_their_own():
    first = Resource.from_list({"cpu": "1", "nvidia.com/gpu": "2"})
    first.add(Resource(1000, scalars={"nvidia.com/gpu": 1000.0}))
    again = Resource.from_list({"cpu": "1", "nvidia.com/gpu": "2"})
    assert again.to_dict() == {"cpu": 1000.0, "memory": 0.0, "nvidia.com/gpu": 2000.0}


def test_a_number_and_a_text_quantity_are_not_confused():
    assert Resource.from_list({"cpu": 1}).milli_cpu == 1000
    assert Resource.from_list({"cpu": "1"}).milli_cpu == 1000
    try:
        Resource.from_list({"cpu": True})
    except ValueError as exc:
        assert "not True" in str(exc)
    else:
        raise AssertionError("a boolean quantity was accepted")


def _as_json_list(*objects: str) -> str:
    return '{"apiVersion": "v1", "kind": "List", "items": [\n' + ",\n".join(objects) + "\n]}\n"


JSON_NODE = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2"}}}'


def test_a_duplicate_key_in_json_is_the_yaml_loader_s_error():
    from fumarole.policy_lang.diagnostics import FumaroleError
    from fumarole.runtime.ingest.kube import load_cluster

    text = _as_json_list(JSON_NODE.replace('"name": "n1"', '"name": "n1", "name": "n2"'))
    try:
        load_cluster(text, "c.json")
    except FumaroleError as exc:
        (diagnostic,) = exc.diagnostics
        assert diagnostic.code == "K001" and "duplicate key 'name'" in diagnostic.message
        assert (diagnostic.span.line, diagnostic.span.col) == (2, 65)
    else:
        raise AssertionError("a duplicate key was accepted")


def test_escaped_quotes_before_a_colon_are_not_keys():
    """A last-applied-configuration annotation holds JSON in a string: its \\": are not keys."""
    from fumarole.runtime.ingest.json_input import plain_json

    node = JSON_NODE.replace('"name": "n1"', '"name": "n1", "annotations": {"a": "{\\"k\\":1,\\"k\\":2}", '
                             '"b": "ends in a backslash\\\\"}')
    doc = plain_json(_as_json_list(node))
    assert doc is not None
    assert doc[0]["items"][0]["metadata"]["annotations"]["a"] == '{"k":1,"k":2}'


def test_json_nested_past_the_limit_takes_the_yaml_path():
    from fumarole.runtime.ingest.json_input import plain_json
    from fumarole.runtime.ingest.yamlpos import MAX_DEPTH

    def nested(depth: int) -> str:
        return '{"a": ' * (depth - 1) + "[]" + "}" * (depth - 1)

    assert plain_json(nested(MAX_DEPTH - 1)) is not None
    assert plain_json(nested(MAX_DEPTH + 1)) is None
    assert plain_json('{"a" : 1}') is None  # whitespace before a colon: not counted, so not taken


PLAIN_YAML_SAME = [
    "a: 1\nb: '1'\nc: 1.5\nd: yes\ne: ~\nf: 2026-01-01T00:00:00Z\ng: 0x1F\nh: 1e3\n",
    "---\n---\nkind: Node\n...\n---\n- [1, {a: b}]\n- |\n  text\n",
    "1: one\n2.5: two\nfalse: three\nlist: []\nmap: {}\n",
    # Anchors and aliases (an alias shares its anchor's object, as the careful loader's does).
    "a: &x 1\nb: *x\n",
    "a: &x {p: [1, 2]}\nb: *x\nc: [*x, *x]\n",
    "a: &k name\n*k : 3\n",
    "a: &x 1\nb: &x 2\nc: *x\n",
]
PLAIN_YAML_GIVES_UP = [
    "---\na: &x 1\n---\nb: *x\n",  # an anchor names a node of its own document only
    "a: &x [1]\n? *x\n: 2\n",  # a collection as a key, through an alias
    "a: &x {b: *x}\n",  # an alias inside the collection it names
    "a: *nope\n",
    "a: &a [1,2,3,4,5,6,7,8,9,10]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",  # a billion laughs
    "a: &d " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 60 + "*d" + "]" * 60 + "\n",  # nested past the limit
    "a: !!str 1\n",
    "base: &b {x: 1}\nother:\n  <<: *b\n",
    "a: 1\na: 2\n",
    "? [a]\n: 1\n",
    "a: " + "[" * 200 + "]" * 200 + "\n",
    "a: [\n",
    "a: 2026-13-45\n",
    "x: " + "9" * 5000 + "\n",  # longer than Python converts: the careful loader keeps it as text
]


def test_plain_yaml_reads_what_the_careful_loader_reads():
    from fumarole.runtime.ingest.plain_yaml import plain_yaml
    from fumarole.runtime.ingest.yamlpos import load_all

    for text in PLAIN_YAML_SAME:
        assert plain_yaml(text) == load_all(text), text


def test_a_cluster_with_an_anchor_is_read_without_positions(monkeypatch):
    """One anchor used to send the whole file to the position-keeping loader (issue 24: L took 6 s
    and 1.1 GB with one, 3 s without); the objects are the careful loader's all the same."""
    from fumarole.runtime.ingest import kube, yamlpos

    text = (ROOT / "examples/cluster.yaml").read_text()
    second = 'allocatable: {cpu: "4", memory: 16Gi, pods: "110"}'
    spelled = text.replace(second, 'allocatable: {cpu: "8", memory: 32Gi, pods: "110"}')
    anchored = text.replace("allocatable:", "allocatable: &same", 1).replace(second, "allocatable: *same")
    assert anchored != text and spelled != text
    careful_reads = []
    monkeypatch.setattr(yamlpos, "_Builder", lambda *a, _b=yamlpos._Builder: careful_reads.append(1) or _b(*a))
    cluster = kube.load_cluster(anchored, "anchored.yaml")
    assert careful_reads == [] and cluster.nodes == kube.load_cluster(spelled, "spelled.yaml").nodes


@settings(max_examples=40, deadline=None, database=None)
@given(st.data())
def test_plain_yaml_reads_shared_objects_as_the_careful_loader_does(data):
    """yaml.dump writes an object met twice as an anchor and aliases."""
    from fumarole.runtime.ingest.plain_yaml import plain_yaml
    from fumarole.runtime.ingest.yamlpos import load_all

    shared = data.draw(_random_values())
    doc = {"first": shared, "items": [shared, {"again": shared}], "other": data.draw(_random_values())}
    text = yaml.safe_dump(doc)
    plain = plain_yaml(text)
    assert plain is None or plain == load_all(text), text


def test_plain_yaml_leaves_what_needs_judgement_to_the_careful_loader():
    from fumarole.runtime.ingest.plain_yaml import plain_yaml

    for text in PLAIN_YAML_GIVES_UP:
        assert plain_yaml(text) is None, text


# Block style as kubectl (go-yaml: double quotes, lists at their key's column) and yaml.dump
# (single quotes, shared objects as anchors) print it.
BLOCK_YAML_SAME = [
    'apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    labels:\n      zone: "1"\n'
    '    name: n1\n  spec:\n    taints:\n    - effect: NoSchedule\n      key: k\n  status:\n    allocatable:\n'
    '      cpu: "4"\n      pods: "110"\nkind: List\nmetadata:\n  resourceVersion: ""\n',
    "a: 1\nb: '1'\nc: 1.5\nd: yes\ne: ~\nf: 2026-01-01T00:00:00Z\ng: 0x1F\nh: 1e3\ni: 190:20:30\nj: -1\nk: 'it''s'\n",
    "1: one\n2.5: two\nfalse: three\n'4': four\n\"5\": five\nlist: []\nmap: {}\nnone:\nlast: image:1.25   \n",
    "- - 1\n  - - 2\n    - 3\n- - a: 1\n    b:\n    - x\n    c: 2\n- null\n- key:\n  - deep\n",
    "x:\n  a:\n    b:\n      c: d\ny: e\n",
    "- &id001\n  a: 1\n  b:\n  - 2\n- *id001\n- c: *id001\n",
    "shared: &x\n  p: [1]\nagain: *x\n".replace("[1]", "[]"),
    "top:\n  - a\n  - b\nnext: 1\n",
]
BLOCK_YAML_GIVES_UP = [
    "# a comment\na: 1\n", "a: 1 # a comment\n", "a: 1\n\nb: 2\n", "a:\tb\n", "a: 1\r\nb: 2\r\n", "a: é\n",
    "a: long\n  continued\n", "- long\n  continued\n", "a: 'two\n  lines'\n", "a: |\n  text\n", "a: >\n  text\n",
    "a: {b: 1}\n", "a: [1, 2]\n", "a: !!str 1\n", "a: &x 1\nb: *x\n", "a: *nope\n", "a: &x\n  b: *x\n",
    "---\na: 1\n", "a: 1\n...\n", "%YAML 1.1\n---\na: 1\n", "a: 1\na: 2\n", "1: a\ntrue: b\n", "<<: {}\n",
    "base: &b\n  x: 1\nother:\n  <<: *b\n", "? a\n: 1\n", "a : 1\n", "a: b: c\n", "a: \"esc\\n\"\n", "just text\n",
    "a: 1\n b: 2\n", "a:\n  - 1\n  b: 2\n", "- a\nb: 1\n", "a:\n- 1\n - 2\n", "a: 2026-13-45\n",
    "k" * 1030 + ": 1\n", "x: " + "9" * 5000 + "\n", "a: &x\n", "- &x\n- 1\n", "a:\n  " * 120 + "b: 1\n",
    "a: &a\n- 1\n- 1\n- 1\n- 1\n- 1\n- 1\n- 1\n- 1\n- 1\n- 1\nb: &b\n" + "- *a\n" * 10 + "c: &c\n" + "- *b\n" * 10
    + "d: &d\n" + "- *c\n" * 10 + "e: &e\n" + "- *d\n" * 10 + "f:\n" + "- *e\n" * 10,  # a billion laughs
]


def _strictly_equal(a, b) -> bool:
    """Equal with the same types throughout (1, 1.0 and True are equal in Python, not in YAML)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(type(x) is type(y) for x, y in zip(a, b)) \
            and all(_strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_strictly_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or a != a and b != b)


def test_block_yaml_reads_what_the_careful_loader_reads():
    from fumarole.runtime.ingest.block_yaml import block_yaml
    from fumarole.runtime.ingest.yamlpos import load_all

    for text in BLOCK_YAML_SAME:
        read = block_yaml(text)
        assert read is not None and _strictly_equal(read, load_all(text)), text
    shared = block_yaml(BLOCK_YAML_SAME[5])[0]
    assert shared[0] is shared[1] is shared[2]["c"]


def test_block_yaml_leaves_every_other_text_to_the_event_reader():
    from fumarole.runtime.ingest.block_yaml import block_yaml

    for text in BLOCK_YAML_GIVES_UP:
        assert block_yaml(text) is None, text


@settings(max_examples=150, deadline=None, database=None)
@given(st.data())
def test_block_yaml_reads_any_dump_or_a_dump_changed_as_libyaml_does(data):
    """A dump, and the same dump with indentation shifted, lines doubled or swapped, indicators
    inserted: whatever the line reader takes, the careful loader reads the same (libyaml does
    not refuse it), with the same types, the aliases sharing their objects."""
    from fumarole.runtime.ingest.block_yaml import block_yaml
    from fumarole.runtime.ingest.yamlpos import YamlError, load_all

    shared = data.draw(_random_values())
    doc = {"first": shared, "items": [shared, {"again": shared}], "other": data.draw(_random_values())}
    text = yaml.dump(doc, indent=data.draw(st.sampled_from([2, 3, 4])), width=data.draw(st.sampled_from([20, 80])),
                     default_style=data.draw(st.sampled_from([None, '"', "'"])), allow_unicode=True)
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(0, len(lines) - 1))
        line, change = lines[at], data.draw(st.integers(0, 4))
        if change == 0:
            lines[at] = data.draw(st.sampled_from([" ", "  ", "- ", "- - "])) + line
        elif change == 1:
            lines[at] = line[data.draw(st.integers(0, min(2, len(line)))):]
        elif change == 2:
            lines.insert(at, data.draw(st.sampled_from([line, "", "- x", "  - y", "z:", "- ", "  q: 1"])))
        elif change == 3 and at + 1 < len(lines):
            lines[at], lines[at + 1] = lines[at + 1], lines[at]
        else:
            cut = data.draw(st.integers(0, len(line)))
            lines[at] = line[:cut] + data.draw(st.sampled_from(list(" :-#'\"&*!|>{}[],?%@`x1"))) + line[cut:]
    text = "\n".join(lines)
    read = block_yaml(text)
    if read is None:
        return
    try:
        careful = load_all(text)
    except YamlError as exc:
        raise AssertionError(f"read what libyaml refuses ({exc}): {text!r}") from None
    assert _strictly_equal(read, careful), text
    if read and isinstance(read[0], dict) and read[0].get("items") == doc["items"] and isinstance(shared, (dict, list)):
        assert read[0]["first"] is read[0]["items"][0]


def test_a_kubectl_dump_is_read_a_line_at_a_time(monkeypatch):
    """Issue 24: libyaml's events cost a Python object and two marks each; the lines of a dump in
    kubectl's block style are read without them, into the model the events give."""
    from fumarole.runtime.ingest import kube

    objects = yaml.safe_load((ROOT / "examples/cluster.yaml").read_text())["items"]
    objects[1]["metadata"]["labels"] = objects[0]["metadata"]["labels"]  # written as an anchor and an alias
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})
    assert "&id001" in text
    events = kube.load_cluster(text, "c.yaml")
    monkeypatch.setattr(kube, "plain_yaml", lambda _text: pytest.fail("read through libyaml's events"))
    lines = kube.load_cluster(text, "c.yaml")
    assert lines == events and lines.nodes[0]["metadata"]["labels"] is lines.nodes[1]["metadata"]["labels"]
    for built, by_events in ((lines.built.nodes, events.built.nodes), (lines.built.tasks, events.built.tasks)):
        assert [_fields(a, type(a).__slots__) for a in built] == [_fields(b, type(b).__slots__) for b in by_events]


def _random_values():
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                        st.text(max_size=3), st.just("2026-01-01T00:00:00Z"), st.just("not a time"))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["name", "labels", "containers", "resources", "ports", "hostPort", "x",
                                         "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                                         "matchExpressions", "values", "key", "weight", "names", "taints"]),
                        inner, max_size=4)), max_leaves=12)


def _random_objects():
    from hypothesis import strategies as st

    sections = {"metadata": ["name", "namespace", "uid", "labels", "annotations", "creationTimestamp",
                             "deletionTimestamp", "bogus"],
                "spec": ["priority", "containers", "initContainers", "affinity", "tolerations", "taints",
                         "unschedulable", "minMember", "minTaskMember", "queue", "weight", "reclaimable", "nodeName",
                         "topologySpreadConstraints", "subGroupPolicy", "nodeSelector", "bogus"],
                "status": ["phase", "conditions", "images", "state", "allocatable", "bogus"]}
    section = {name: st.dictionaries(st.sampled_from(fields), _random_values(), max_size=4)
               for name, fields in sections.items()}
    return st.fixed_dictionaries({}, optional={**section, "value": _random_values(),
                                              "globalDefault": _random_values()})


def test_the_compiled_checks_agree_with_the_walks_that_report():
    """The predicates decide whether the reporting walks run: they must find a problem exactly
    when the walks do (for unknown fields, at least when the walks do: keys that are not text
    are never reported, but send the object to the walk)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from fumarole.runtime.ingest import kube_fields
    from fumarole.runtime.ingest.known_fields import _ALL_KNOWN, reported_unknown_fields

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(sorted(kube_fields._TREES)), _random_objects())
    def check(kind, obj):
        assert kube_fields._ALL_TYPED[kind](obj) == (
            next(kube_fields._mistyped(obj, kube_fields._TREES[kind]), None) is None)
        if kind in _ALL_KNOWN:
            reported = bool(reported_unknown_fields(kind, obj, "f"))
            assert _ALL_KNOWN[kind](obj) or reported or _has_key_not_text(obj)
            assert not (_ALL_KNOWN[kind](obj) and reported)

    check()


def _has_key_not_text(value: object) -> bool:
    if isinstance(value, dict):
        return any(not isinstance(k, str) or _has_key_not_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_key_not_text(v) for v in value)
    return False


def test_the_collector_resumes_after_loading_with_what_loading_made_long_lived():
    import gc

    from fumarole.runtime.ingest.gc_pause import gc_paused

    assert gc.isenabled()
    frozen = gc.get_freeze_count()  # 0 unless something in this process keeps objects frozen
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            pass
        assert not gc.isenabled()  # an inner pause leaves the outer one paused
        made = [[i] for i in range(10_000)]
    assert gc.isenabled() and gc.get_count()[0] < 1_000  # not left for the youngest generation
    assert gc.get_freeze_count() == frozen and len(made) == 10_000  # loading froze nothing


def test_objects_a_program_keeps_frozen_stay_frozen():
    import gc

    from fumarole.runtime.ingest.gc_pause import gc_paused

    kept = [[i] for i in range(100)]  # what the program froze (the whole heap's count moves as
    gc.freeze()                          # other threads free frozen objects: these stay alive)
    try:
        with gc_paused():
            [[i] for i in range(100)]
        assert gc.isenabled() and gc.get_freeze_count() >= len(kept)
        tracked = {id(o) for o in gc.get_objects()}  # every generation but the permanent one
        assert not any(id(o) in tracked for o in kept) and id(kept) not in tracked
    finally:
        gc.unfreeze()


def test_a_long_run_of_backslashes_before_a_key_end_takes_the_yaml_path():
    """Each run length costs a pass over the text: 100,000 backslashes must not mean 100,000 passes."""
    from fumarole.runtime.ingest.json_input import plain_json

    assert plain_json('{"' + "\\\\" * 50_000 + '": 1}') is None
    assert plain_json('{"' + "\\\\" * 2 + '": 1, "b": {"c": 2}}') == [{"\\\\": 1, "b": {"c": 2}}]


def test_actions_run_with_the_collector_paused_and_it_resumes_after_them():
    """A session's actions make many short-lived objects and almost no cycles: collections would
    only traverse the cluster's model again.  The collector is back on when the actions end,
    also when a policy fails."""
    import gc
    from pathlib import Path

    import pytest

    from fumarole.runtime.bundles.bundle import default_bundle
    from fumarole.runtime.framework.lifecycle import new_session
    from fumarole.runtime.ingest.kube import load_cluster

    path = Path(__file__).resolve().parent.parent / "examples" / "cluster.yaml"
    session = new_session(default_bundle(), load_cluster(path.read_text(), path.name), now=0.0)
    session.open()
    seen: list[tuple[str, bool]] = []
    session.progress = lambda phase, _placed: seen.append((phase, gc.isenabled()))
    session.run_actions()
    decisions = session.close()
    assert seen and not any(enabled for _phase, enabled in seen)
    assert gc.isenabled() and decisions.binds
    session.progress = lambda phase, _placed: 1 / 0
    with pytest.raises(ZeroDivisionError):
        session.run_actions()
    assert gc.isenabled()


def test_what_pauses_age_counts_towards_a_full_collection_when_a_session_begins():
    """Pauses move what they made straight to the oldest generation, past the collector's own count
    of long-lived objects: they keep that count themselves, so the cycles of finished sessions are
    collected in a process that runs session after session (serve, replay)."""
    import gc

    from fumarole.runtime.ingest.gc_pause import collect_if_due, gc_paused

    collect_if_due()  # the first session of a process may only take the measure
    full = gc.get_stats()[2]["collections"]
    alive = len(gc.get_objects())  # what the tests before this one keep
    for _ in range(2 * alive // 50_000 + 40):  # well past what lives now, however much the tests before keep
        with gc_paused():
            for _ in range(50_000):
                cycle: list = []
                cycle.append(cycle)  # garbage only a full collection frees, once it is old
        collect_if_due()
        if gc.get_stats()[2]["collections"] > full:
            break
    assert gc.get_stats()[2]["collections"] > full
    assert len(gc.get_objects()) - alive < 1_000_000  # the 2,000,000 cycles made did not all stay

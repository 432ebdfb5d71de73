"""Arguments Volcano reads as one comma-separated text (`split ","`) or only through
``framework.Get`` (`strict`): binpack's and network-topology-aware's resources ignore a YAML list
(``.(string)`` fails), resource-strategy-fit's sra/proportional resources and extender's
managedResources stop Volcano on the other form (mapstructure cannot decode it), so fumarole
refuses it.  The decisions themselves are pinned by the authored conformance cases
(plugins/binpack/authored-a-resources-*, plugins/network-topology-aware/authored-*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.policy_lang.fmt import format_source
from fumarole.policy_lang.parser import parse
from fumarole.runtime.bundles.arguments import split_text
from fumarole.runtime.bundles.bundle import build_bundle, override_arguments
from fumarole.runtime.ingest.scheduler_config import load_config

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "examples" / "cluster.yaml"

HEAD = 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n' \
       '- plugins:\n  - name: predicates\n'


def _conf(tmp_path: Path, plugin: str, arguments: str) -> Path:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(HEAD + f"  - name: {plugin}\n    arguments:\n" + arguments)
    return conf


def _arguments(text: str, plugin: str) -> tuple[dict, list[tuple[str, str, int]]]:
    bundle = build_bundle(load_config(text, "v.conf"))
    entry = next(e for tier in bundle.tiers for e in tier if e.name == plugin)
    return entry.arguments, [(d.code, d.severity, d.span.line) for d in bundle.warnings]


def test_a_binpack_resources_list_is_ignored_with_a_warning(cli, tmp_path):
    conf = _conf(tmp_path, "binpack", "      binpack.resources: [nvidia.com/gpu]\n")
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 0, run.err
    assert run.err.splitlines() == [
        f"{conf}:8:26: warning[C012]: argument 'binpack.resources' of plugin 'binpack' must be a string of items "
        "separated by ',', not ['nvidia.com/gpu']; the default [] is used"]
    assert "binds" in json.loads(run.out)
    assert cli("check", str(conf)).code == 0


@pytest.mark.parametrize("plugin, key", [("binpack", "binpack.resources"),
                                         ("network-topology-aware", "hypernode.binpack.resources")])
def test_a_resources_text_is_cut_as_go_cuts_it(plugin, key):
    arguments, warnings = _arguments(HEAD + f"  - name: {plugin}\n    arguments:\n"
                                     f"      {key}: ' a/gpu ,,b ,\t, a/gpu'\n", plugin)
    assert arguments["resources"] == ["a/gpu", "b", "a/gpu"] and warnings == []


@pytest.mark.parametrize("section", ["sra", "proportional"])
def test_a_resource_strategy_fit_resources_list_is_a_configuration_error(cli, tmp_path, section):
    conf = _conf(tmp_path, "resource-strategy-fit",
                 f"      {section}:\n        enable: false\n        resources: [nvidia.com/gpu]\n")
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    assert run.err.splitlines()[:4] == [
        f"{conf}:10:20: error[C012]: argument '{section}/resources' of plugin 'resource-strategy-fit' must be a "
        "string of items separated by ',', not ['nvidia.com/gpu']",
        "  10 |         resources: [nvidia.com/gpu]",
        "                          ^",
        "  hint: Volcano stops the scheduler on it (framework.Get cannot decode it: klog.Fatalf)"]
    check = cli("check", str(conf))
    assert check.code == 1 and f"{conf}:10:20: error[C012]" in check.out


def test_resource_strategy_fit_reads_its_resources_text_and_a_null_as_go_does():
    text = HEAD + ("  - name: resource-strategy-fit\n    arguments:\n"
                   "      sra: {enable: true, weight: 1, resources: 'nvidia.com/gpu, ,x'}\n"
                   "      proportional: {enable: true, resources: null}\n")
    arguments, warnings = _arguments(text, "resource-strategy-fit")
    assert arguments["sra_resources"] == ["nvidia.com/gpu", "x"] and arguments["proportional_resources"] == []
    assert warnings == []


def test_an_extender_managed_resources_text_is_a_configuration_error(cli, tmp_path):
    conf = _conf(tmp_path, "extender", "      extender.managedResources: nvidia.com/gpu, amd.com/gpu\n")
    run = cli("run", str(CLUSTER), "--config", str(conf))
    assert run.code == 2 and "Traceback" not in run.err
    assert run.err.splitlines()[0] == (
        f"{conf}:8:34: error[C012]: argument 'extender.managedResources' of plugin 'extender' must be a list, "
        "not 'nvidia.com/gpu, amd.com/gpu'")


@pytest.mark.parametrize("value, managed", [("[nvidia.com/gpu, amd.com/gpu]", ["nvidia.com/gpu", "amd.com/gpu"]),
                                            ("null", []), ("[nvidia.com/gpu, null]", ["nvidia.com/gpu", ""])])
def test_extender_managed_resources_decode_as_mapstructure_decodes_them(value, managed):
    """A null is Go's nil slice, a null item the zero string (mapstructure leaves both unset)."""
    arguments, warnings = _arguments(HEAD + f"  - name: extender\n    arguments:\n"
                                     f"      extender.managedResources: {value}\n", "extender")
    assert arguments["managed_resources"] == managed and warnings == []


def test_a_strict_value_of_another_type_stays_an_error_in_the_bundle():
    with pytest.raises(FumaroleError) as err:
        build_bundle(load_config(HEAD + "  - name: extender\n    arguments:\n      extender.managedResources: [1]\n",
                                 "v.conf"))
    assert [(d.code, d.severity, d.span.line) for d in err.value.diagnostics] == [("C012", "error", 8)]


def test_a_value_given_outside_a_configuration_is_split_too():
    bundle = build_bundle(load_config(HEAD + "  - name: binpack\n", "v.conf"))
    changed, used = override_arguments(bundle, {"binpack.resources": "x/gpu, y/fpga"})
    binpack = next(e for tier in changed.tiers for e in tier if e.name == "binpack")
    assert binpack.arguments["resources"] == ["x/gpu", "y/fpga"] and used == {"binpack.resources"}
    with pytest.raises(FumaroleError) as err:
        override_arguments(bundle, {"binpack.resources": ["x/gpu"]})
    assert [(d.code, d.severity) for d in err.value.diagnostics] == [("C012", "error")]


def test_split_and_strict_are_checked(cli, tmp_path):
    policy = tmp_path / "p.policy"
    policy.write_text('plugin p\n\narg a: string = "" from "a" split ","\narg b: list[string] = [] split ""\n'
                      'arg c: int = 0 from "c" strict\n\non node_order(task, node) = float(len(a) + len(b) + c)\n')
    check = cli("check", str(policy))
    assert check.code == 1
    assert [line for line in check.out.splitlines() if "error[" in line] == [
        f"{policy}:3:8: error[E140]: an argument read with `split` must have type list[string]",
        f"{policy}:4:1: error[E140]: `split` needs a non-empty separator",
        f"{policy}:5:8: error[E140]: a `strict` argument must have type string or list[string]"]


def test_split_and_strict_format_canonically():
    source = ('plugin p\n\narg a:list[string]=[] from "s"/"r"   split  ";"  strict # why\n'
              'arg b: list[string] = ["x"] split "\\"" \n\non node_order(task, node) = float(len(a) + len(b))\n')
    assert format_source(source) == (
        'plugin p\n\narg a: list[string] = [] from "s" / "r" split ";" strict  # why\n'
        'arg b: list[string] = ["x"] split "\\""\n\non node_order(task, node) = float(len(a) + len(b))\n')


# Go's unicode.IsSpace: what strings.TrimSpace trims (Python's str.strip also trims \x1c-\x1f).
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000"
ITEM_CHARS = st.sampled_from(list("ab/.-,;") + list(GO_SPACE[:6]) + ["\x1c", "\xa0", "\u3000", "é"])


@settings(max_examples=150, deadline=None)
@given(st.text(ITEM_CHARS, max_size=24), st.sampled_from([",", ";", ", ", "ab"]))
def test_split_text_items_are_what_go_leaves(text, separator):
    items = split_text(text, separator)
    assert all(item and separator not in item for item in items)
    assert all(item[0] not in GO_SPACE and item[-1] not in GO_SPACE for item in items)
    # Each item is one piece of the text between separators; dropping only Go's white space.
    pieces = [piece.strip(GO_SPACE) for piece in text.split(separator)]
    assert items == [piece for piece in pieces if piece]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab/.-\x1c")), min_size=1, max_size=6), max_size=5))
def test_items_joined_with_a_comma_read_back(items):
    """A \\x1c is not Go white space: an item keeps it at its ends."""
    assert split_text(" , ".join(items), ",") == items


@settings(max_examples=60, deadline=None)
@given(st.text(st.sampled_from(list('a,;/ "\\é')), min_size=1, max_size=6), st.booleans())
def test_a_declared_separator_survives_formatting(separator, strict):
    written = json.dumps(separator, ensure_ascii=False)
    source = (f'plugin p\n\narg a: list[string] = [] from "k" split {written}{" strict" if strict else ""}\n\n'
              'on node_order(task, node) = float(len(a))\n')
    formatted = format_source(source)
    assert formatted == source
    decl = parse(formatted).decls[0]
    assert (decl.key, decl.split, decl.strict) == ("k", separator, strict)

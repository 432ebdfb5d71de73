"""Arguments Volcano reads as one comma-separated text (`split ","`) or only through
``framework.Get`` (`strict`): binpack's and network-topology-aware's resources ignore a YAML list
(``.(string)`` fails), resource-strategy-fit's sra/proportional resources and extender's
managedResources stop Volcano on the other form (mapstructure cannot decode it), so fumarole
refuses it; tdm's and rescheduling's texts read with a bare ``v.(string)`` (`asserted`) panic on
any other value, so fumarole refuses that too.  The decisions themselves are pinned by the authored
conformance cases (plugins/binpack/authored-a-resources-*, plugins/network-topology-aware/authored-*)."""

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
                      'arg c: duration = 10m from "c" strict\narg d: map[string, list[string]] = {} strict\n'
                      'arg e: map[string, int] = {} strict\n\n'
                      'on node_order(task, node) = float(len(a) + len(b) + len(d) + len(e)) + c\n')
    check = cli("check", str(policy))
    assert check.code == 1
    assert [line for line in check.out.splitlines() if "error[" in line] == [
        f"{policy}:3:8: error[E140]: an argument read with `split` must have type list[string]",
        f"{policy}:4:1: error[E140]: `split` needs a non-empty separator",
        f"{policy}:5:8: error[E140]: a `strict` argument must have type int, float, bool, string, list[string] "
        "or map[string, T] of the first four",
        f"{policy}:6:8: error[E140]: a `strict` argument must have type int, float, bool, string, list[string] "
        "or map[string, T] of the first four"]


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


# resource-strategy-fit reads every argument with framework.Get: mapstructure v1.5.0, not weakly typed
# (decodeInt/decodeFloat/decodeBool/decodeString), after gopkg.in/yaml.v2 resolved the numbers.
RSF = HEAD + "  - name: resource-strategy-fit\n    arguments:\n"
GO_MIN, GO_MAX = -(2**63), 2**63 - 1


def _strict_refusal(arguments: str) -> list[tuple[str, str, int, int, str | None]]:
    with pytest.raises(FumaroleError) as err:
        build_bundle(load_config(RSF + arguments, "v.conf"))
    return [(d.code, d.severity, d.span.line, d.span.col, d.hint) for d in err.value.diagnostics]


@pytest.mark.parametrize("value, weight", [
    ("2.5", 2), ("-2.5", -2), ("0.99", 0), ("null", 0), ("-3", -3), (str(GO_MAX), GO_MAX),
    ("18446744073709551615", -1),  # a uint64 to yaml.v2; int64(u) wraps
    ("9223372036854775808", GO_MIN), ("-9223372036854775809", GO_MIN)])  # a float64 -2^63: int64 takes it
def test_a_strict_int_decodes_as_mapstructure_does(value, weight):
    arguments, warnings = _arguments(RSF + f"      resources: {{cpu: {{weight: {value}}}}}\n",
                                     "resource-strategy-fit")
    assert arguments["strategy_weights"] == {"cpu": weight} and warnings == []


def test_strict_scalars_maps_and_sections_decode_as_mapstructure_does():
    arguments, warnings = _arguments(RSF + "      resourceStrategyFitWeight: 10.9\n"
                                     "      resources: {cpu: null, ~: {type: MostAllocated}}\n"
                                     "      sra: {enable: true, weight: 3.7, resourceWeight: {a: 1.9, b: null}}\n"
                                     "      proportional: {resourceProportion: {a.cpu: 4, a.memory: null}}\n",
                                     "resource-strategy-fit")
    assert warnings == []
    assert (arguments["weight"], arguments["sra_weight"], arguments["sra_enable"]) == (10, 3, True)
    assert arguments["strategy_types"] == {"cpu": "", "": "MostAllocated"}  # a null key decodes as ""
    assert arguments["strategy_weights"] == {"cpu": 0, "": 0}
    assert arguments["sra_resource_weights"] == {"a": 1, "b": 0}
    assert arguments["resource_proportion"] == {"a.cpu": 4.0, "a.memory": 0.0}
    nulls, _ = _arguments(RSF + "      resourceStrategyFitWeight: null\n      resources: null\n      sra: null\n",
                          "resource-strategy-fit")
    # Get returns (0, true): the weight is 0, not the default 10; a null section is the zero structure
    assert (nulls["weight"], nulls["strategy_types"], nulls["sra_enable"]) == (0, {}, False)


def test_a_structure_field_written_twice_is_read_by_its_go_name():
    """mapstructure (decodeStructFromMap) looks a field up by its Go name first (``Type``,
    ``Weight``, ``Enable``) and only then ignoring case, so ``Type`` wins over ``type`` whatever
    the order they are written in."""
    arguments, warnings = _arguments(RSF + "      resources: {cpu: {type: LeastAllocated, Type: MostAllocated, "
                                     "Weight: 4, weight: 2}}\n"
                                     "      sra: {enable: false, Enable: true}\n", "resource-strategy-fit")
    assert warnings == []
    assert arguments["strategy_types"] == {"cpu": "MostAllocated"}
    assert arguments["strategy_weights"] == {"cpu": 4}
    assert arguments["sra_enable"] is True
    one_spelling, _ = _arguments(RSF + "      resources: {cpu: {TYPE: MostAllocated}}\n", "resource-strategy-fit")
    assert one_spelling["strategy_types"] == {"cpu": "MostAllocated"}  # no Go name: matched ignoring case


STOPS = "Volcano stops the scheduler on it (framework.Get cannot decode it: klog.Fatalf)"
MACHINE = "Go's int64 conversion of it depends on the machine (amd64 and arm64 differ): give an int64"


@pytest.mark.parametrize("arguments, at, hint", [
    ("      resources: {cpu: {weight: '3'}}\n", "'3'", STOPS),  # no WeaklyTypedInput: a text is no int
    ("      resources: {cpu: {weight: true}}\n", "true", STOPS),
    ("      resources: {cpu: {weight: 99999999999999999999}}\n", "9999", MACHINE),
    ("      resources: {cpu: {weight: .nan}}\n", ".nan", MACHINE),
    ("      resourceStrategyFitWeight: -.inf\n", "-.inf", MACHINE),
    ("      resources: {cpu: {type: 1}}\n", "1}", STOPS),
    ("      resources: {cpu: 3}\n", "3", STOPS),  # an entry that is not a structure
    ("      resources: {1: {weight: 1}}\n", "{weight", STOPS),  # a key that is not a text (at its entry)
    ("      resources: [{weight: 1}]\n", "[", STOPS),  # a list is no map without WeaklyTypedInput
    ("      sra: {enable: 'true'}\n", "'true'", STOPS),
    ("      sra: {enable: 1}\n", "1", STOPS),
    ("      sra: {resourceWeight: {a: '1'}}\n", "'1'", STOPS),
    ("      proportional: {resourceProportion: {a.cpu: '4'}}\n", "'4'", STOPS),
    ("      proportional: {resourceProportion: {a.cpu: false}}\n", "false", STOPS),
    ("      proportional: [enable]\n", "[", STOPS)])
def test_a_value_framework_get_cannot_decode_is_a_positioned_error(arguments, at, hint):
    assert _strict_refusal(arguments) == [("C012", "error", 8, arguments.index(at) + 1, hint)]


def test_a_strict_refusal_exits_2_without_a_traceback(cli, tmp_path):
    conf = _conf(tmp_path, "resource-strategy-fit", "      resources: {cpu: {weight: '3'}}\n")
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    assert run.err.splitlines()[0] == (f"{conf}:8:33: error[C012]: argument 'resources/cpu/weight' of plugin "
                                       "'resource-strategy-fit' must be an int, not '3'")


@settings(max_examples=80, deadline=None)
@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False))
def test_a_float_weight_is_truncated_toward_zero(number):
    text = f"{number:.3f}"
    arguments, warnings = _arguments(RSF + f"      sra: {{weight: {text}}}\n", "resource-strategy-fit")
    weight = arguments["sra_weight"]
    assert warnings == [] and isinstance(weight, int)
    assert abs(weight) <= abs(float(text)) < abs(weight) + 1 and (weight == 0 or (weight > 0) == (float(text) > 0))


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.integers(min_value=-(2**66), max_value=2**66),
                 st.integers(min_value=GO_MAX - 2, max_value=GO_MAX + 2),
                 st.integers(min_value=2**64 - 3, max_value=2**64 + 2)))
def test_a_yaml_integer_weight_is_what_go_makes_of_it(number):
    text = RSF + f"      sra: {{weight: {number}}}\n"
    if GO_MIN <= number <= GO_MAX:
        assert _arguments(text, "resource-strategy-fit")[0]["sra_weight"] == number
    elif GO_MAX < number < 2**64:  # a uint64 to yaml.v2: int64(u) keeps its bits
        assert _arguments(text, "resource-strategy-fit")[0]["sra_weight"] == number - 2**64
    elif float(number) == float(GO_MIN):  # rounds to -2^63 as a float64, which int64 holds
        assert _arguments(text, "resource-strategy-fit")[0]["sra_weight"] == GO_MIN
    else:  # a float64 past int64: Go leaves int64(f) to the machine
        assert _strict_refusal(f"      sra: {{weight: {number}}}\n") == [("C012", "error", 8, 21, MACHINE)]


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.booleans(), st.text(st.sampled_from("ab1. "), min_size=1, max_size=4)))
def test_a_bool_or_text_weight_is_refused(value):
    written = json.dumps(value)
    assert _strict_refusal(f"      sra: {{weight: {written}}}\n") == [("C012", "error", 8, 21, STOPS)]


# -- `asserted`: keys Volcano's plugins read with a bare `v.(string)` --------------------------------------

ASSERTS = "Volcano's plugin panics on it (a bare type assertion, `v.(string)`): give a text"


@pytest.mark.parametrize("plugin, arguments, at", [
    ("tdm", "      tdm.evict.period: 60\n", "60"),
    ("tdm", "      tdm.evict.period: null\n", "null"),
    ("tdm", "      tdm.evict.period: [1m]\n", "["),
    ("tdm", "      tdm.revocable-zone.rz1: '10:00-21:00'\n      tdm.revocable-zone.rz2: 1000\n", "1000"),
    ("tdm", "      tdm.revocable-zone.rz1: null\n", "null"),
    ("rescheduling", "      interval: 300\n", "300"),
    ("rescheduling", "      interval: 5m\n      metricsPeriod: true\n", "true")])
def test_a_value_a_bare_type_assertion_panics_on_is_a_positioned_error(plugin, arguments, at):
    """tdm.go New (``v.(string)``, ``period.(string)``) and rescheduling.go parseArguments
    (``intervalArg.(string)``, ``metricsPeriodArg.(string)``) panic on a value that is not a text, a
    null included, every session the plugin opens: the scheduler goes down, so there is no decision."""
    with pytest.raises(FumaroleError) as err:
        build_bundle(load_config(HEAD + f"  - name: {plugin}\n    arguments:\n" + arguments, "v.conf"))
    line = arguments.count("\n", 0, arguments.index(at))
    assert [(d.code, d.severity, d.span.line, d.span.col, d.hint) for d in err.value.diagnostics] == [
        ("C012", "error", 8 + line, arguments.splitlines()[line].index(at) + 1, ASSERTS)]


def test_asserted_texts_load_and_a_duration_go_does_not_read_keeps_the_default():
    """A text that does not parse is no panic: tdm keeps its 1m period, rescheduling its 5m interval
    (time.ParseDuration fails, the plugin keeps its default), each with a positioned C012 warning."""
    text = HEAD + ("  - name: tdm\n    arguments:\n      tdm.evict.period: soon\n"
                   "      tdm.revocable-zone.rz1: '10:00-21:00'\n"
                   "  - name: rescheduling\n    arguments:\n      interval: ''\n      metricsPeriod: 10m\n")
    bundle = build_bundle(load_config(text, "v.conf"))
    entries = {e.name: e.arguments for tier in bundle.tiers for e in tier}
    assert entries["tdm"]["evict_period"] == 60.0 and entries["tdm"]["revocable_zones"] == {"rz1": "10:00-21:00"}
    assert entries["rescheduling"]["interval"] == 300.0 and entries["rescheduling"]["metrics_period"] == "10m"
    assert [(d.code, d.severity, d.span.line, d.span.col, d.message) for d in bundle.warnings] == [
        ("C012", "warning", 8, 25, "argument 'tdm.evict.period' of plugin 'tdm' must be a duration, not 'soon'; "
                                   "the default 1m0s is used"),
        ("C012", "warning", 12, 17, "argument 'interval' of plugin 'rescheduling' must be a duration, not ''; "
                                    "the default 5m0s is used")]


def test_an_asserted_duration_given_a_number_is_still_an_error(cli, tmp_path):
    conf = _conf(tmp_path, "tdm", "      tdm.evict.period: 60\n")
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    assert run.err.splitlines()[0] == (f"{conf}:8:25: error[C012]: argument 'tdm.evict.period' of plugin 'tdm' "
                                       "must be a duration, not 60")


def test_asserted_is_checked_and_formats_canonically(cli, tmp_path):
    policy = tmp_path / "p.policy"
    policy.write_text('plugin p\n\narg a: int = 1 from "a" asserted\narg b: map[string, int] from prefix "b." asserted\n'
                      'arg c: string = "" from "c" / "d" asserted\narg e: string = "" from "e"   asserted # why\n\n'
                      'on node_order(task, node) = float(a + len(b) + len(c) + len(e))\n')
    check = cli("check", str(policy))
    message = ("error[E140]: an `asserted` argument must have type string or duration, or map[string, string] read "
               "`from prefix` or `from containing`")
    assert [line for line in check.out.splitlines() if "error[" in line] == [
        f"{policy}:3:8: {message}", f"{policy}:4:8: {message}", f"{policy}:5:8: {message}"]
    assert 'arg e: string = "" from "e" asserted  # why\n' in format_source(policy.read_text(), str(policy))
    assert parse('plugin p\n\narg asserted: string = "" from "x" asserted\n', "p.policy").decls[0].asserted

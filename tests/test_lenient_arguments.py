"""Plugin and action arguments read as Volcano reads them: a value of the wrong type, an unknown key
or a section that is not a mapping is a warning (C010, C012) and the argument keeps its default,
as ``GetInt``/``GetFloat64``/``GetBool``/``GetString`` in ``pkg/scheduler/framework/arguments.go``
keep it; only a value given outside a configuration (a sweep's, the command line's) is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span
from fumarole.runtime.bundles.bundle import build_bundle, override_arguments
from fumarole.runtime.bundles.library import standard_library
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.kube import load_cluster
from fumarole.runtime.ingest.scheduler_config import load_config

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "examples" / "cluster.yaml"

BINPACK = """actions: enqueue, allocate, backfill
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - {{name: predicates}}
  - name: binpack
    arguments:
      binpack.weight: {weight}
      binpack.cpu: 3
"""


def test_a_wrongly_typed_weight_warns_and_decides_as_the_default(cli, tmp_path):
    conf, default = tmp_path / "volcano-scheduler.conf", tmp_path / "default.conf"
    conf.write_text(BINPACK.format(weight="heavy") + "      binpack.wieght: 4\n")
    default.write_text(BINPACK.format(weight=1))
    run = cli("run", str(CLUSTER), "--config", str(conf), "-o", "json")
    assert run.code == 0, run.err
    assert run.err.splitlines() == [
        f"{conf}:8:23: warning[C012]: argument 'binpack.weight' of plugin 'binpack' must be an int, not 'heavy'; "
        "the default 1 is used",
        f"{conf}:10:7: warning[C010]: plugin 'binpack' has no argument 'binpack.wieght'; it is ignored"]
    binds = json.loads(run.out)["binds"]
    assert binds and binds == json.loads(cli("run", str(CLUSTER), "--config", str(default), "-o", "json").out)["binds"]
    assert cli("check", str(conf)).code == 0
    assert cli("check", "--strict", str(conf)).code == 1
    assert cli("check", "--fail-on", "warning", str(conf)).code == 1
    strict = cli("check", "--strict", str(conf))
    assert "error[C012]" in strict.out and "error[C010]" in strict.out


def test_a_null_or_boolean_value_or_key_is_named_as_the_configuration_writes_it(cli, tmp_path):
    """Messages spell YAML's null and booleans as written, not as Python prints them."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(BINPACK.format(weight="true") + "  - name: usage\n    arguments:\n      estimator: {null: 3}\n")
    err = cli("check", str(conf)).out
    assert "argument 'binpack.weight' of plugin 'binpack' must be an int, not true; the default 1 is used" in err
    assert "argument 'estimator/null' of plugin 'usage' must be a text key, not null;" in err


def test_diff_shows_the_warnings_and_the_default_changes_nothing(cli, tmp_path):
    conf, default = tmp_path / "a.conf", tmp_path / "b.conf"
    conf.write_text(BINPACK.format(weight="heavy"))
    default.write_text(BINPACK.format(weight=1))
    result = cli("diff", str(CLUSTER), "--base", str(default), "--candidate", str(conf), "--fail-on-change")
    assert result.code == 0, result.out + result.err
    assert result.err == f"{conf}:8:23: warning[C012]: argument 'binpack.weight' of plugin 'binpack' must be an int, " \
        "not 'heavy'; the default 1 is used\n"


def test_the_warnings_travel_with_the_bundle():
    config = load_config(BINPACK.format(weight="[1]"), "v.conf")
    bundle = build_bundle(config)
    assert [(d.code, d.severity, d.span.line) for d in bundle.warnings] == [("C012", "warning", 8)]
    binpack = next(e for tier in bundle.tiers for e in tier if e.name == "binpack")
    assert binpack.arguments["weight"] == 1 and binpack.arguments["cpu"] == 3


def test_an_argument_with_nothing_to_keep_stays_an_error():
    """Without a default there is no value to decide with (C011's case): a wrong value is refused."""
    from fumarole.runtime.bundles.library import compile_sources

    library = compile_sources([("p.policy", "plugin p\n\narg limit: int\n\non overused(queue) = queue.weight > limit\n")],
                              base=standard_library())
    config = load_config("actions: allocate\ntiers:\n- plugins:\n  - {name: p, arguments: {limit: x}}\n", "v.conf")
    with pytest.raises(FumaroleError) as err:
        build_bundle(config, library)
    assert [(d.code, d.severity) for d in err.value.diagnostics] == [("C012", "error")]


def test_a_value_given_outside_a_configuration_is_still_refused():
    with pytest.raises(FumaroleError) as err:
        override_arguments(build_bundle(load_config(BINPACK.format(weight=2), "v.conf")), {"binpack.weight": "heavy"})
    assert [(d.code, d.severity) for d in err.value.diagnostics] == [("C012", "error")]


USAGE = """actions: enqueue, allocate
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - name: usage
    arguments:
      estimator: {{be_cpu: {value}}}
"""


def _usage_arguments(value: str) -> tuple[dict, list]:
    bundle = build_bundle(load_config(USAGE.format(value=value), "v.conf"))
    usage = next(e for tier in bundle.tiers for e in tier if e.name == "usage")
    return usage.arguments, [(d.code, d.message) for d in bundle.warnings]


@pytest.mark.parametrize("value, text, millis", [("500", "250m", 500), ("'500'", "500", -1), ("-5", "250m", -5)])
def test_a_key_two_arguments_read_is_taken_by_the_one_of_its_type(value, text, millis):
    """usage.go parseBestEffortCPU: an int is millicores, a string a quantity; both read estimator.be_cpu."""
    arguments, warnings = _usage_arguments(value)
    assert (arguments["be_cpu"], arguments["be_cpu_millis"], warnings) == (text, millis, [])


def test_a_key_no_argument_reads_warns_once():
    arguments, warnings = _usage_arguments("0.5")
    assert (arguments["be_cpu"], arguments["be_cpu_millis"]) == ("250m", -1)
    assert warnings == [("C012", "argument 'estimator/be_cpu' of plugin 'usage' must be a quantity, not 0.5; "
                                 "the default '250m' is used")]


@pytest.mark.parametrize("section", ["thresholds: {cpu: 50, mem: 50, 1: 50}",
                                     "estimator: {request_ratio: 0.8, be_cpu: 500, null: 1}"])
def test_a_usage_section_with_a_key_that_is_not_a_text_is_ignored_whole(section):
    """usage.go getUsageSectionArgs returns no section when ``key.(string)`` fails on any key: every
    argument under it keeps its default, and the one warning names the key."""
    text = USAGE.format(value=0).replace("estimator: {be_cpu: 0}", section)
    bundle = build_bundle(load_config(text, "v.conf"))
    usage = next(e for tier in bundle.tiers for e in tier if e.name == "usage")
    assert {k: usage.arguments[k] for k in ("cpu_threshold", "memory_threshold", "request_ratio", "be_cpu_millis")} \
        == {"cpu_threshold": 80, "memory_threshold": 80, "request_ratio": 0.7, "be_cpu_millis": -1}
    name = section.split(":")[0]
    key = "1" if name == "thresholds" else "null"
    assert [(d.code, d.severity, d.message) for d in bundle.warnings] == [
        ("C012", "warning", f"argument '{name}/{key}' of plugin 'usage' must be a text key, not {key}; "
                            f"the whole '{name}' section is ignored")]


def test_a_usage_section_key_is_matched_exactly():
    """usage.go reads its sections with Arguments.GetInt / GetFloat64, Go map lookups by the exact
    key: ``CPU`` is no ``cpu`` (mapstructure's case folding is for a structure's fields)."""
    text = USAGE.format(value=0).replace("estimator: {be_cpu: 0}", "thresholds: {CPU: 50, mem: 40}")
    bundle = build_bundle(load_config(text, "v.conf"))
    usage = next(e for tier in bundle.tiers for e in tier if e.name == "usage")
    assert (usage.arguments["cpu_threshold"], usage.arguments["memory_threshold"]) == (80, 40)
    assert [(d.code, d.message) for d in bundle.warnings] == [
        ("C010", "plugin 'usage' has no argument 'thresholds/CPU'; it is ignored")]


def test_a_string_argument_takes_no_number_and_a_map_no_key_that_is_not_a_string():
    """gpuexclusive.go parseExclusiveRules keeps a label only when its key and value are strings."""
    text = UNMODELLED.format(plugin="deviceshare", key="deviceshare.GPUExclusiveRules",
                             value="[{app: training, team: 1, 7: x}], deviceshare.SchedulePolicy: 3")
    bundle = build_bundle(load_config(text, "v.conf"))
    deviceshare = next(e for tier in bundle.tiers for e in tier if e.name == "deviceshare")
    assert deviceshare.arguments["exclusive_rules"] == {"0": {"app": "training"}}
    assert deviceshare.arguments["schedule_policy"] == ""
    assert sorted(d.message for d in bundle.warnings) == [
        "argument 'deviceshare.GPUExclusiveRules/0/7' of plugin 'deviceshare' must be a text key, not 7; "
        "the entry is left out",
        "argument 'deviceshare.GPUExclusiveRules/0/team' of plugin 'deviceshare' must be a string, not 1; "
        "the entry is left out",
        "argument 'deviceshare.SchedulePolicy' of plugin 'deviceshare' must be a string, not 3; the default '' "
        "is used"]
    left_out = [d for d in bundle.warnings if d.message.endswith("the entry is left out")]
    assert {d.hint for d in left_out} == {"the map keeps its other entries; give this one a value of the type named"}


# -- keys Volcano reads that fumarole models only at their default ------------------------------------------

UNMODELLED = """actions: enqueue, allocate
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - name: {plugin}
    arguments: {{{key}: {value}}}
"""


@pytest.mark.parametrize("plugin, key, value", [
    ("deviceshare", "deviceshare.AscendMindClusterVNPUEnable", "false"),
    ("deviceshare", "deviceshare.AscendMindClusterVNPUEnable", "'F'"),  # strconv.ParseBool
    ("predicates", "volumebinding.weight", "1"),
    ("predicates", "volumebinding.weight", "1.9"),  # mapstructure truncates a float
    ("predicates", "volumebinding.bindTimeoutSeconds", "600"),
    ("predicates", "dynamicresources.filterTimeoutSeconds", "10"),
    # predicates_test.go TestSetUpDynamicResourcesArgs_OverideSeconds "ignore negative seconds"
    ("predicates", "dynamicresources.filterTimeoutSeconds", "-5"),
])
def test_an_unmodelled_key_at_volcanos_default_is_accepted(plugin, key, value):
    bundle = build_bundle(load_config(UNMODELLED.format(plugin=plugin, key=key, value=value), "v.conf"))
    assert bundle.warnings == ()


@pytest.mark.parametrize("plugin, key, value, default", [
    ("deviceshare", "deviceshare.AscendMindClusterVNPUEnable", "'true'", "false"),
    ("predicates", "volumebinding.weight", "2", "1"),
    ("predicates", "volumebinding.weight", "null", "1"),  # mapstructure decodes null as Go's zero
    ("predicates", "volumebinding.bindTimeoutSeconds", "30", "600"),
    ("predicates", "dynamicresources.filterTimeoutSeconds", "3", "10"),  # ..._OverideSeconds "override with seconds"
    ("predicates", "dynamicresources.filterTimeoutSeconds", "0", "10"),
    ("predicates", "dynamicresources.filterTimeoutSeconds", "-0.5", "10"),  # truncated to 0, not negative
])
def test_an_unmodelled_key_away_from_volcanos_default_is_refused(plugin, key, value, default):
    with pytest.raises(FumaroleError) as err:
        build_bundle(load_config(UNMODELLED.format(plugin=plugin, key=key, value=value), "v.conf"))
    assert [(d.code, d.severity, d.message) for d in err.value.diagnostics] == [
        ("C010", "error", f"argument '{key}' of plugin '{plugin}' is read by Volcano but not modelled by fumarole "
                          f"beyond its default {default}")]


def test_the_predicates_cache_switched_on_loads():
    """predicate.CacheEnable is modelled (the predicates policy's `cache`): true is no longer refused;
    the decisions it changes are the plugins/predicates conformance cases."""
    bundle = build_bundle(load_config(UNMODELLED.format(plugin="predicates", key="predicate.CacheEnable",
                                                        value="true"), "v.conf"))
    assert bundle.warnings == ()


@pytest.mark.parametrize("key", ["volumebinding.weight", "volumebinding.bindTimeoutSeconds",
                                 "dynamicresources.filterTimeoutSeconds"])
def test_an_unmodelled_value_framework_get_cannot_decode_is_an_error(key):
    """helper.go reads these with framework.Get, which stops the scheduler (klog.Fatalf) on a value
    mapstructure cannot decode: there is no Volcano decision, as for a `strict` argument."""
    with pytest.raises(FumaroleError) as err:
        build_bundle(load_config(UNMODELLED.format(plugin="predicates", key=key, value="heavy"), "v.conf"))
    assert [(d.code, d.severity, d.message, d.hint) for d in err.value.diagnostics] == [
        ("C012", "error", f"argument '{key}' of plugin 'predicates' must be an int, not 'heavy'",
         "Volcano stops the scheduler on it (framework.Get cannot decode it: klog.Fatalf)")]


def test_the_volume_binding_keys_are_not_read_with_volume_binding_off():
    """predicates.go InitPlugin sets the volume binding up (and reads its keys) only while
    predicate.VolumeBindingEnable is on: off, an unreadable weight stops nothing and keeps the default."""
    text = UNMODELLED.format(plugin="predicates", key="volumebinding.weight",
                             value="heavy, predicate.VolumeBindingEnable: false")
    bundle = build_bundle(load_config(text, "v.conf"))
    assert [(d.code, d.severity, d.message) for d in bundle.warnings] == [
        ("C012", "warning", "argument 'volumebinding.weight' of plugin 'predicates' must be an int, not 'heavy'; "
                            "the default 1 is used")]


def test_an_integer_past_gos_int_keeps_the_default_with_a_warning():
    huge = 10**400  # past float64 too: gopkg.in/yaml.v2 keeps it as a string (GetInt keeps the default)
    bundle = build_bundle(load_config(UNMODELLED.format(plugin="binpack", key="binpack.weight", value=huge), "v.conf"))
    assert [(d.code, d.severity, d.message) for d in bundle.warnings] == [
        ("C012", "warning", f"argument 'binpack.weight' of plugin 'binpack' must be an int, not '{str(huge)[:59]}...; "
                            "the default 1 is used")]
    run_session(new_session(bundle, load_cluster(CLUSTER.read_text(), str(CLUSTER)), now=0.0))


# -- every argument of every standard plugin, given any YAML value ----------------------------------------

_SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.sampled_from([2**62, 2**63, -2**63 - 1, 10**400]) | \
    st.floats(allow_nan=False, allow_infinity=False, width=32) | st.text(max_size=6)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) |
                       st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
_LIBRARY = standard_library()
_PROBE = Diagnostic("C012", "", "v.conf", Span(1, 1))
_PLUGINS = sorted(_LIBRARY.plugins)


def _placed(key: str, path: tuple, depth: int, value: object) -> dict:
    """``value`` at ``key`` and the first ``depth`` steps of ``path`` (a ``*`` step is a one-item list)."""
    for step in reversed(path[:depth]):
        value = [value] if step is None else {step: value}
    return {key: value}


@st.composite
def _plugin_arguments(draw) -> tuple[str, dict]:
    plugin = draw(st.sampled_from(_PLUGINS))
    declared = [(d.key or n, d.path or ()) for n, d in _LIBRARY.plugins[plugin].module.args.items()]
    arguments: dict = {}
    for key, path in draw(st.lists(st.sampled_from(declared), max_size=3, unique=True)) if declared else []:
        arguments.update(_placed(key, path, draw(st.integers(0, len(path))), draw(_VALUES)))
    arguments[draw(st.text(min_size=1, max_size=8))] = draw(_VALUES)
    return plugin, arguments


_FATAL_HINTS = {config_errors.strict_value(_PROBE).hint, config_errors.asserted_value(_PROBE).hint,
                config_errors.machine_dependent(_PROBE).hint}


@settings(max_examples=40, deadline=None)
@given(_plugin_arguments())
def test_any_argument_value_loads_with_warnings_only_and_a_session_runs(drawn):
    plugin, arguments = drawn
    first = [{"name": "priority"}, {"name": "gang"}]
    second = [{"name": "predicates"}] + ([{"name": plugin, "arguments": arguments}]
                                         if plugin not in ("priority", "gang", "predicates") else [])
    if plugin in ("priority", "gang", "predicates"):
        next(e for e in first + second if e["name"] == plugin)["arguments"] = arguments
    text = yaml.safe_dump({"actions": "enqueue, allocate, backfill", "tiers": [{"plugins": first},
                                                                             {"plugins": second}]})
    try:
        bundle = build_bundle(load_config(text, "v.conf"))
    except FumaroleError as err:
        # deviceshare's switches Volcano dies on together (C022), and a value an argument read by a
        # fatal reader cannot take (`strict`: framework.Get; `asserted`: a bare `v.(string)`), are the
        # refusals left
        errors = [d for d in err.diagnostics if d.severity == "error"]
        assert errors and all(d.code == "C022" or d.code == "C012" and d.hint in _FATAL_HINTS for d in errors), \
            err.render({"v.conf": text})
        return
    assert bundle.warnings and all(d.severity == "warning" and d.code in ("C010", "C012") for d in bundle.warnings)
    run_session(new_session(bundle, load_cluster(CLUSTER.read_text(), str(CLUSTER)), now=0.0))


# -- `from containing`: tdm's revocable zones ------------------------------------------------------

_ZONE_PREFIX = "tdm.revocable-zone."
_KEY_PARTS = st.text(alphabet="abz.-", max_size=4)


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.tuples(_KEY_PARTS, st.booleans(), _KEY_PARTS).map(
    lambda p: p[0] + (_ZONE_PREFIX if p[1] else "") + p[2]), st.sampled_from(["0:00-0:00", "10:00-21:00"]),
    min_size=1, max_size=4))
def test_tdm_takes_a_zone_from_every_key_containing_the_prefix(arguments):
    """tdm.go New: ``strings.Contains(k, prefix)``, the zone named ``strings.Replace(k, prefix, "", 1)``;
    a key without the text is unknown (C010)."""
    text = yaml.safe_dump({"actions": "allocate", "tiers": [{"plugins": [{"name": "tdm", "arguments": arguments}]}]})
    bundle = build_bundle(load_config(text, "v.conf"))
    tdm = next(e for tier in bundle.tiers for e in tier if e.name == "tdm")
    zones = {key.replace(_ZONE_PREFIX, "", 1): value for key, value in arguments.items() if _ZONE_PREFIX in key}
    assume(len(zones) == sum(_ZONE_PREFIX in key for key in arguments))  # two keys naming one zone: Go picks at random
    assert tdm.arguments["revocable_zones"] == zones
    unknown = [key for key in arguments if _ZONE_PREFIX not in key and key != "tdm.evict.period"]
    assert sorted(d.message for d in bundle.warnings if d.code == "C010") == \
        sorted(f"plugin 'tdm' has no argument '{key}'; it is ignored" for key in unknown)

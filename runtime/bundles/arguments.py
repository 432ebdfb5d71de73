"""Plugin and action arguments: a configuration's raw values turned into the types a policy declares.

A policy declares its arguments (``arg sra_enable: bool = false from "sra" / "enable"``);
a ``volcano-scheduler.conf`` or a bundle manifest gives them as YAML.  Reading them
the way Volcano's Go plugins do -- Go's bool spellings, duration texts, key paths
decoded as ``mapstructure`` decodes a structure, Go's zero values for a missing
field -- is a job of its own, with a positioned C010/C011/C012 for every problem.

Volcano reads arguments leniently (``pkg/scheduler/framework/arguments.go``: ``GetInt``,
``GetFloat64``, ``GetBool``, ``GetString`` log a wrongly typed value and keep the default;
a key no plugin reads is never looked at; a section that is not a mapping or a list reads as
absent), so an unknown key (C010) and a wrongly typed value (C012) are warnings here and the
argument keeps its default -- a site's own configuration loads as Volcano would load it.  Only
an argument with nothing to keep (no default) stays an error, and one the policy declares
``strict``: Volcano reads it with ``framework.Get``, and a value mapstructure cannot decode stops
the scheduler (extender.managedResources given a text, sra's resources given a list,
resource-strategy-fit's ``resources`` weight given a text).  A strict argument is decoded as
mapstructure decodes it (:mod:`mapstructure`): a float int field is truncated, a null is Go's zero.
One it declares ``asserted`` is read with a bare type assertion (tdm's ``period.(string)``,
rescheduling's ``intervalArg.(string)``), which panics on any value that is not a text, a null
included: an error too.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from fumarole.policy_lang.diagnostics import Diagnostic, Span, did_you_mean
from fumarole.runtime.bundles import mapstructure
from fumarole.runtime.bundles.library import CompiledPolicy
from fumarole.runtime.framework.go_semantics import duration_text, parse_duration, parse_quantity, trim_space
from fumarole.runtime.ingest.go_parse import parse_go_bool
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yamlpos import key_position, position


# Go's int on the 64-bit builds Volcano ships: a YAML integer outside it is no int to its readers.
GO_INT_MIN, GO_INT_MAX = mapstructure.GO_INT_MIN, mapstructure.GO_INT_MAX


def go_int(value: Any) -> bool:
    """A YAML integer gopkg.in/yaml.v2 gives Go as an int (not one past int64, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and GO_INT_MIN <= value <= GO_INT_MAX


def convert_argument(value: Any, type_name: str, split: str | None = None,
                     strict: bool = False) -> tuple[bool, Any]:
    """``value`` as a ``type_name`` argument: (True, the value) or (False, the value as given).  A
    list argument read with ``split`` takes one text and cuts it (:func:`split_text`); any other
    list argument takes a YAML list of texts only, as ``framework.Get[[]string]`` decodes one
    (mapstructure turns no text into a list: extender.managedResources).  A ``strict`` scalar is
    decoded as mapstructure decodes it (a float int truncated, a text bool refused)."""
    if strict and type_name in STRICT_SCALARS:
        ok, decoded, _ = mapstructure.decode(value, type_name)
        return ok, decoded
    if type_name == "int":
        return go_int(value), value
    if type_name == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if type_name == "bool":
        parsed = parse_go_bool(value) if isinstance(value, (bool, str)) else None
        return parsed is not None, parsed
    if type_name == "string":  # Go's readers take a text only (GetString, `.(string)`, mapstructure)
        return isinstance(value, str), value
    if type_name == "duration":  # a text Go's time.ParseDuration reads, as every Volcano plugin reads one
        seconds = parse_duration(value) if isinstance(value, str) else None
        return seconds is not None, value if seconds is None else seconds
    if type_name == "quantity":  # a text resource.ParseQuantity reads, kept as written for the policy
        return isinstance(value, str) and parse_quantity(value) is not None, value
    if type_name == "list" and split is not None:
        return isinstance(value, str), split_text(value, split) if isinstance(value, str) else value
    if type_name == "list":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return ok, list(value) if ok else value
    return False, value


# The scalar types mapstructure decodes for a `strict` argument (docs/language.md).
STRICT_SCALARS = ("int", "float", "bool", "string")


def split_text(text: str, separator: str) -> list[str]:
    """A text argument cut into items as Volcano's plugins cut ``binpack.resources``,
    ``hypernode.binpack.resources`` and resource-strategy-fit's ``sra``/``proportional``
    ``resources``: ``strings.Split``, each item through ``strings.TrimSpace`` (Go's white space, not
    Python's), empty items skipped; an item given twice stays twice (sra sums its weight twice)."""
    return [item for item in (trim_space(part) for part in text.split(separator)) if item]


def expected_type(type_name: str, split: str | None) -> str:
    """The type a diagnostic names: a list read with ``split`` is given as one string."""
    return f"string of items separated by {split!r}" if split is not None else type_name


def resolve_arguments(policy: CompiledPolicy, raw: Mapping[str, Any], file: str,
                      where: tuple[int, int], what: str) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Typed arguments for one plugin or action entry; every problem becomes a diagnostic: a
    warning where the argument keeps its default (or a map leaves the entry out), an error where
    there is nothing to keep."""
    diags: list[Diagnostic] = []
    out: dict[str, Any] = {}
    used: set[str] = set()
    # A place several arguments read, one per type a Go reader takes there (usage's be_cpu: an int
    # or a text): its value is wrong only when none of them reads it, and then said once.
    read_at: set[tuple] = set()
    bad_at: dict[tuple, list[Diagnostic]] = {}
    for name, decl in policy.module.args.items():
        type_expr = decl.type
        key = decl.key or name
        bad: list[Diagnostic] = []  # the argument's own value is unusable: default kept, or an error
        if decl.family:
            values = {}
            for raw_key, value in raw.items():
                if _in_family(raw_key, key, decl.family):
                    used.add(raw_key)
                    ok, converted = convert_argument(value, type_expr.args[1].name)
                    if ok:
                        values[raw_key.replace(key, "", 1)] = converted
                        continue
                    error = argument_error(raw, raw_key, value, type_expr.args[1].name, file, what)
                    diags.append(config_errors.asserted_value(error) if decl.asserted
                                 else config_errors.entry_left_out(error))
            out[name] = values
            continue
        resolved: Any = _ABSENT
        if decl.path:
            if key in raw:
                used.add(key)
            resolved = _follow_path(raw, key, decl.path, type_expr, file, what, diags, bad, decl.split, decl.strict,
                                    key in TEXT_KEYED_SECTIONS.get(policy.module.name, ()),
                                    MAP_KEYED_STEPS.get(policy.module.name, {}).get(key, frozenset()))
        elif key in raw:
            used.add(key)
            resolved = _converted(raw, key, type_expr, file, what, diags, bad, split=decl.split, strict=decl.strict,
                                  asserted=decl.asserted)
        place = (key, decl.path)
        if resolved is not _ABSENT:
            out[name] = resolved
            read_at.add(place)
        elif decl.default is not None:
            out[name] = _literal_default(decl.default, type_expr.name)
            if not decl.strict:  # Volcano stops on such a value: it stays an error
                bad = [_default_kept(d, out[name], type_expr.name) if d.severity == "error" else d for d in bad]
        elif not any(d.severity == "error" for d in bad):  # nothing to keep: read as absent, it is missing
            diags.append(config_errors.missing_argument(file, Span(*where), what, key, type_expr.name))
        bad_at.setdefault(place, bad)
    diags.extend(d for place, bad in bad_at.items() if place not in read_at for d in bad)
    decoded = DECODED_LISTS.get(policy.module.name)
    if decoded is not None:
        decoded(raw, out)
    _unknown_fields(policy, raw, file, what, diags)
    for raw_key in raw:
        unmodelled = NOT_MODELLED.get(policy.module.name, {}).get(raw_key)
        if unmodelled is not None:
            diags.extend(_unmodelled_value(unmodelled, raw, raw_key, file, what))
        elif raw_key not in used:
            known = [d.key or n for n, d in policy.module.args.items()]
            diags.append(config_errors.unknown_argument(file, Span(*key_position(raw, raw_key)), what, str(raw_key),
                                                        did_you_mean(str(raw_key), known)))
    return out, list(dict.fromkeys(diags))  # several key paths through one bad mapping report it once


# An argument value that cannot be used: the argument keeps its default, a map leaves the entry out.
_ABSENT = object()


@dataclass(frozen=True)
class Unmodelled:
    """A key Volcano's plugins read that fumarole does not model.  Only its default is modelled:
    ``reads_as`` gives what Volcano makes of a configuration value (``_ABSENT`` where its reader
    gives up), so a value Volcano reads as ``default`` decides as fumarole does and is accepted,
    and any other is refused -- ignoring it, as an unknown key is ignored, would decide
    differently from a Volcano that reads it."""

    default: Any
    reads_as: Callable[[Any], Any]
    type_name: str
    # Whether Volcano reads the key, given the plugin's arguments, with framework.Get, which stops
    # the scheduler on a value it cannot decode (klog.Fatalf): such a value is then an error, as for a
    # `strict` argument.  None for a lenient reader (GetBool keeps the default).
    fatal_when: Callable[[Mapping], bool] | None = None


def _in_family(raw_key: Any, text: str, family: str) -> bool:
    """Whether ``raw_key`` belongs to an argument read `from prefix` or `from containing` ``text``:
    binpack's and the hypernode plugin's resource weights are keys starting with their prefix,
    tdm's revocable zones every key containing it (tdm.go's ``strings.Contains``; the zone is the
    key with the first occurrence removed, as ``strings.Replace(k, prefix, "", 1)``)."""
    if not isinstance(raw_key, str):
        return False
    return raw_key.startswith(text) if family == "prefix" else text in raw_key


def _go_get_bool(value: Any) -> Any:
    """What ``Arguments.GetBool`` stores: a bool, or a string strconv.ParseBool reads."""
    parsed = parse_go_bool(value) if isinstance(value, (bool, str)) else None
    return _ABSENT if parsed is None else parsed


def _mapstructure_int(value: Any) -> Any:
    """What ``framework.Get[int]`` decodes (:func:`mapstructure.decode_int`), Go's zero for a null;
    ``_ABSENT`` for a value it cannot decode or whose conversion depends on the machine."""
    if value is None:
        return 0
    decoded, _ = mapstructure.decode_int(value)
    return _ABSENT if decoded is None else decoded


def _volume_binding_on(raw: Mapping) -> bool:
    """predicates.go InitPlugin reads the volume binding's keys (helper.go setUpVolumeBindingArgs) only
    while predicate.VolumeBindingEnable, read with GetBool (default true), is on."""
    return _go_get_bool(raw.get("predicate.VolumeBindingEnable", True)) is not False


def _always(_raw: Mapping) -> bool:
    """The DRA filter's arguments are read whenever the DynamicResourceAllocation gate is on, as it is
    under the default gates fumarole decides with."""
    return True


def _filter_timeout_seconds(value: Any) -> Any:
    """predicates/helper.go setUpDynamicResourcesArgs: a negative count of seconds keeps the default."""
    seconds = _mapstructure_int(value)
    return 10 if seconds is not _ABSENT and seconds < 0 else seconds


# Sections a plugin reads as a Go map rather than decoding a structure, which it gives up on whole
# when a key is not a text: usage.go getUsageSectionArgs (``key.(string)`` fails, the section is
# ignored and every argument under it keeps its default).
TEXT_KEYED_SECTIONS: dict[str, frozenset[str]] = {"usage": frozenset({"thresholds", "estimator"})}

# Key-path steps a plugin looks up in a Go map, whose keys match exactly, rather than as a
# structure's field (mapstructure also matches a field name written in another case): by plugin
# and top-level key, the indexes of such steps in the path (the key itself is 0).  usage.go reads
# its sections with Arguments.GetInt / GetFloat64 / `estimatorArgs["be_cpu"]`; rescheduling's
# lowNodeUtilization reads `configs["thresholds"]` / `configs["targetThresholds"]` of a strategy's
# Params map (low_node_utilization.go parse), while `name` and `params` are Strategy's fields.
MAP_KEYED_STEPS: dict[str, dict[str, frozenset[int]]] = {
    "usage": {"thresholds": frozenset({1}), "estimator": frozenset({1})},
    "rescheduling": {"strategies": frozenset({3})},
}


def _decodes_as_strategy(item: Any) -> bool:
    """Whether mapstructure.Decode (v1.5.0) fills rescheduling.go's ``Strategy`` (``Name string``,
    ``Params map[string]interface{}``) from one item of ``strategies``: a null is the zero Strategy;
    an item that is no mapping, a name that is not a text, or params that are not a mapping (or hold
    a key that is not a text: a null key decodes as "") do not decode."""
    if item is None:
        return True
    if not isinstance(item, Mapping):
        return False
    name = mapstructure_field(item, "name")
    if name is not None and item[name] is not None and not isinstance(item[name], str):
        return False
    field = mapstructure_field(item, "params")
    params = None if field is None else item[field]
    return params is None or isinstance(params, Mapping) and all(k is None or isinstance(k, str) for k in params)


def _rescheduling_strategies(raw: Mapping, out: dict[str, Any]) -> None:
    """rescheduling.go parseArguments: ``strategies`` is read as a list (``.([]interface{})``), anything
    else as none, so the default strategy runs; a list with items replaces it even when no item
    decodes (``mapstructure.Decode`` into a Strategy, an item that fails is left out, and
    RegisteredStrategyConfigs keeps the last decoded one of a name).  An item left out, or one
    without a name, names no strategy: ""."""
    strategies = raw.get("strategies")
    if not isinstance(strategies, list):
        out["strategy_names"], out["low_thresholds"], out["target_thresholds"] = {}, {}, {}
        return
    names = dict(out["strategy_names"])
    for index, item in enumerate(strategies):
        if not _decodes_as_strategy(item) or str(index) not in names:
            names[str(index)] = ""
    out["strategy_names"] = names


# Lists a plugin decodes item by item into a structure, leaving out an item that does not decode:
# by plugin, what makes its resolved arguments say so.
DECODED_LISTS: dict[str, Callable[[Mapping, dict[str, Any]], None]] = {"rescheduling": _rescheduling_strategies}


NOT_MODELLED: dict[str, dict[str, Unmodelled]] = {
    # deviceshare.go enablePredicate: GetBool(&vnpu.AscendMindClusterVNPUEnable, ...) switches to MindCluster's vNPU
    "deviceshare": {"deviceshare.AscendMindClusterVNPUEnable": Unmodelled(False, _go_get_bool, "bool")},
    # predicates/helper.go (the VolumeBinding and DynamicResources filters are on under the default
    # feature gates): framework.Get of the volume binding score's weight, the volume binder's and
    # the DRA filter's timeouts
    "predicates": {
        "volumebinding.weight": Unmodelled(1, _mapstructure_int, "int", _volume_binding_on),
        "volumebinding.bindTimeoutSeconds": Unmodelled(600, _mapstructure_int, "int", _volume_binding_on),
        "dynamicresources.filterTimeoutSeconds": Unmodelled(10, _filter_timeout_seconds, "int", _always),
    },
}

def _unmodelled_value(key: Unmodelled, raw: Mapping, raw_key: str, file: str, what: str) -> list[Diagnostic]:
    """Nothing for a value Volcano reads as the key's default; for one its reader cannot read, a C012
    warning where the reader keeps the default (GetBool) and a C012 error where it stops the
    scheduler (framework.Get, when Volcano reads the key: no Volcano decision exists); the C010
    error for any other."""
    value = key.reads_as(raw[raw_key])
    if value is _ABSENT:
        error = argument_error(raw, raw_key, raw[raw_key], key.type_name, file, what)
        if key.fatal_when is not None and key.fatal_when(raw):
            return [config_errors.strict_value(error)]
        return [config_errors.default_kept(error, key.default)]
    if value == key.default:
        return []
    return [config_errors.argument_not_modelled(file, Span(*key_position(raw, raw_key)), what, raw_key, key.default)]



def _converted(container: Mapping | list, key: Any, type_expr: Any, file: str, what: str,
               diags: list[Diagnostic], bad: list[Diagnostic], shown: str | None = None,
               split: str | None = None, strict: bool = False, asserted: bool = False) -> Any:
    """``container[key]`` as an argument of the declared type, or ``_ABSENT`` with its diagnostic in
    ``bad`` when it is not one.  A ``map[string, T]`` argument reads a YAML mapping, each value a T;
    an entry that is not a T is left out (a warning in ``diags``), as Volcano skips what it cannot read.
    A ``strict`` argument is decoded as mapstructure decodes it: a null is Go's zero value (so is a
    null item of a list, a null key or entry of a map), and a value it cannot decode -- the whole
    argument, or any one entry of it -- is a ``strict_value`` error.  An ``asserted`` argument (a
    string or a duration) takes a text only, a null no more than any other value: an
    ``asserted_value`` error; an asserted duration's text that Go's time.ParseDuration does not read
    keeps the default, as tdm and rescheduling keep theirs."""
    value = container[key]
    if asserted and not isinstance(value, str):  # an error whatever the default: straight to diags
        diags.append(config_errors.asserted_value(argument_error(container, key, value, type_expr.name, file, what,
                                                                 shown)))
        return _ABSENT
    if strict:
        if value is None:
            return copy.copy(_ZERO[type_expr.name])
        if isinstance(value, list) and split is None:
            value = ["" if item is None else item for item in value]
    if type_expr.name == "map":
        if not isinstance(value, Mapping):
            bad.append(_refused(argument_error(container, key, value, "mapping", file, what, shown), strict))
            return _ABSENT
        inner = type_expr.args[1]
        entries = {}
        for k in value:
            entry_bad: list[Diagnostic] = []
            name = _map_key(value, k, file, what, f"{shown or key}/{k}", strict, entry_bad)
            entry = _ABSENT if name is None else \
                _converted(value, k, inner, file, what, diags, entry_bad, f"{shown or key}/{k}", strict=strict)
            if strict and entry_bad:  # mapstructure's decodeMap fails on any entry: Volcano exits
                bad.extend(entry_bad)
                return _ABSENT
            diags.extend(config_errors.entry_left_out(d) for d in entry_bad)
            if entry is not _ABSENT:
                entries[name] = entry
        return entries
    ok, converted = convert_argument(value, type_expr.name, split, strict)
    if not ok:
        error = argument_error(container, key, value, expected_type(type_expr.name, split), file, what, shown)
        machine = strict and type_expr.name in STRICT_SCALARS and \
            mapstructure.decode(value, type_expr.name)[2] == mapstructure.MACHINE_DEPENDENT
        bad.append(config_errors.machine_dependent(error) if machine else _refused(error, strict))
        return _ABSENT
    return converted


def _refused(error: Diagnostic, strict: bool) -> Diagnostic:
    """A value an argument cannot read: for a strict one, an error saying Volcano stops on it."""
    return config_errors.strict_value(error) if strict else error


def _map_key(mapping: Mapping, key: Any, file: str, what: str, shown: str, strict: bool,
             bad: list[Diagnostic]) -> str | None:
    """A map entry's key as a Go map[string]T holds it, or None with the problem in ``bad``: Go's
    lenient readers skip (gpuexclusive.go) a key that is not a text; mapstructure decodes a null
    key as "" (a null sets nothing) and cannot decode any other."""
    if isinstance(key, str):
        return key
    if strict and key is None:
        return ""
    bad.append(_refused(argument_error(mapping, key, key, "text key", file, what, shown), strict))
    return None


def _follow_path(raw: Mapping, key: str, path: tuple[str | None, ...], type_expr: Any, file: str, what: str,
                 diags: list[Diagnostic], bad: list[Diagnostic], split: str | None = None,
                 strict: bool = False, text_keyed: bool = False, exact: frozenset[int] = frozenset()) -> Any:
    """The value at a key path (``from "sra" / "weight"``, ``from "resources" / * / "type"``), as Go
    decodes a structure (mapstructure): a missing field, or a section that is not a mapping (a
    warning in ``bad``), gives ``_ABSENT`` and so the argument's default; under ``*`` every entry
    of the mapping or list gives one map entry, and an entry missing the rest of the path gives the
    zero value (Go's zero field).  A ``strict`` argument is read as framework.Get decodes it into a
    structure: a null section is the zero structure (the argument's zero value), and a section that
    is not a mapping -- a list under ``*`` too -- is an error.  A ``text_keyed`` section
    (:data:`TEXT_KEYED_SECTIONS`) with a key that is not a text is read as absent as a whole; a step
    whose index is in ``exact`` (:data:`MAP_KEYED_STEPS`) matches its key exactly."""
    node: Any = raw
    parent: Any = raw
    last: Any = key
    steps: list[Any] = [key, *path]
    shown = ""
    for index, step in enumerate(steps):
        if strict and node is None:
            return copy.copy(_ZERO[type_expr.name])
        if step is None and isinstance(node, list) and not strict:
            return _each_entry(node, steps[index + 1:], type_expr.args[1], file, what, diags, bad, shown, strict,
                               {i - index - 1 for i in exact if i > index})
        if not isinstance(node, Mapping):
            expected = "mapping or a list" if step is None and not strict else "mapping"
            error = argument_error(parent, last, node, expected, file, what, shown)
            bad.append(config_errors.strict_value(error) if strict else config_errors.section_absent(error))
            return _ABSENT
        if step is None:
            return _each_entry(node, steps[index + 1:], type_expr.args[1], file, what, diags, bad, shown, strict,
                               {i - index - 1 for i in exact if i > index})
        if text_keyed and index == 1:
            odd = next((k for k in node if not isinstance(k, str)), _ABSENT)
            if odd is not _ABSENT:
                bad.append(config_errors.section_ignored(
                    argument_error(node, odd, odd, "text key", file, what, f"{shown}/{config_errors.as_written(odd)}"), shown))
                return _ABSENT
        step = step if index == 0 else _field(node, step, index in exact)
        if step is None or step not in node:
            return _ABSENT
        parent, last, node = node, step, node[step]
        shown = f"{shown}/{step}" if shown else str(step)
    return _converted(parent, last, type_expr, file, what, diags, bad, shown, split, strict)


def _each_entry(entries: Mapping | list, rest: list[Any], type_expr: Any, file: str, what: str,
                diags: list[Diagnostic], bad: list[Diagnostic], shown: str, strict: bool,
                exact: set[int] | frozenset[int] = frozenset()) -> Any:
    """One map entry per entry of a mapping, or per item of a list keyed by its index ("0", "1", ...);
    an item is reported at its own place in the list, and an item that cannot be read is left out --
    for a ``strict`` argument, the whole argument is refused (``_ABSENT`` and the error in ``bad``)."""
    out: dict[str, Any] = {}
    for entry_key, entry in (enumerate(entries) if isinstance(entries, list) else entries.items()):
        node, parent, last = entry, entries, entry_key
        where = f"{shown}/{entry_key}"
        entry_bad: list[Diagnostic] = []
        name = str(entry_key) if isinstance(entries, list) or not strict else \
            _map_key(entries, entry_key, file, what, where, strict, entry_bad)
        if name is None:  # a strict map's key mapstructure cannot decode
            bad.extend(entry_bad)
            return _ABSENT
        missing = False
        for depth, step in enumerate(rest):
            if strict and node is None:  # mapstructure: a null entry is the zero structure
                break
            if not isinstance(node, Mapping):
                entry_bad.append(_refused(argument_error(parent, last, node, "mapping", file, what, where), strict))
                break
            step = _field(node, step, depth in exact)
            if step is None:
                node, missing = None, True
                break
            parent, last, node = node, step, node[step]
            where = f"{where}/{step}"
        # A field left out is Go's zero value, and so is a null scalar (mapstructure sets nothing); a null
        # where a lenient reader wants a mapping is no mapping: Go type-asserts such a section
        # (rescheduling's ``thresholds.(map[interface{}]interface{})``), which a nil fails.
        zero = node is None and (missing or strict or type_expr.name != "map")
        value = _ABSENT if entry_bad else copy.copy(_ZERO.get(type_expr.name, {})) if zero else \
            _converted(parent, last, type_expr, file, what, diags, entry_bad, where, strict=strict)
        if strict and entry_bad:
            bad.extend(entry_bad)
            return _ABSENT
        diags.extend(config_errors.entry_left_out(d) for d in entry_bad)
        if value is not _ABSENT:
            out[name] = value
    return out


def _indexed(items: list) -> Iterable[tuple[str, Any]]:
    """A list's entries keyed by their index ("0", "1", ...), for a `*` over a list."""
    return ((str(i), item) for i, item in enumerate(items))


def _field(mapping: Mapping, name: str, exact: bool) -> Any:
    """The key a path step reads: a Go map's (``exact``) or a structure field's (:func:`mapstructure_field`)."""
    if exact:
        return name if name in mapping else None
    return mapstructure_field(mapping, name)


def mapstructure_field(mapping: Mapping, name: str) -> Any:
    """The key of a structure field in a mapping as mapstructure (v1.5.0, decodeStructFromMap) finds
    it: the Go field's own name exactly, else a key equal to it ignoring case; None if none.

    ``name`` is the field as configurations spell it (its json tag, which mapstructure does not read);
    the Go name is that with its first letter upper-cased (``Name``, ``Params``, ``ResourceWeight``:
    true of every structure Volcano decodes from its arguments).  So with both ``name`` and ``Name``
    Volcano reads ``Name``.  Among several keys differing only in case, none the Go name, Go takes
    whichever its map iteration meets first (no single Volcano decision): here the first written."""
    go_name = name[:1].upper() + name[1:]
    if go_name in mapping:
        return go_name
    return next((k for k in mapping if isinstance(k, str) and k.casefold() == name.casefold()), None)


# Go's zero values, for a structure field the configuration leaves out.
_ZERO: dict[str, Any] = {"int": 0, "float": 0.0, "bool": False, "string": "", "duration": 0.0, "list": [],
                         "map": {}}


def _unknown_fields(policy: CompiledPolicy, raw: Mapping, file: str, what: str, diags: list[Diagnostic]) -> None:
    """C010 for a field of a structured argument no key path of the policy reads (``sra: {enabel: true}``):
    Go would ignore it silently, and the plugin would then run on its default."""
    tree: dict[Any, Any] = {}
    for name, decl in policy.module.args.items():
        if decl.path:
            node = tree.setdefault(decl.key or name, {})
            for step in decl.path[:-1]:
                node = node.setdefault(step, {})
            node.setdefault(decl.path[-1], {})
    ignored = TEXT_KEYED_SECTIONS.get(policy.module.name, ())
    for key, fields in tree.items():
        if key in ignored and isinstance(raw.get(key), Mapping) and not all(isinstance(k, str) for k in raw[key]):
            continue  # the plugin reads none of it: the C012 of the key that is not a text says so
        if key in raw:
            _check_fields(raw[key], fields, str(key), file, what, diags, 1,
                          MAP_KEYED_STEPS.get(policy.module.name, {}).get(key, frozenset()))


def _check_fields(value: Any, fields: dict[Any, Any], shown: str, file: str, what: str,
                  diags: list[Diagnostic], depth: int = 1, exact: frozenset[int] = frozenset()) -> None:
    """C010 for each key of ``value`` no path reads; ``depth`` is the index of its keys' step in
    the paths, matched exactly when in ``exact`` (a Go map's keys), else as mapstructure does."""
    if not fields or not isinstance(value, (Mapping, list)):
        return
    if None in fields:
        entries = _indexed(value) if isinstance(value, list) else value.items() if isinstance(value, Mapping) else ()
        for entry_key, entry in entries:
            _check_fields(entry, fields[None], f"{shown}/{entry_key}", file, what, diags, depth + 1, exact)
        return
    if not isinstance(value, Mapping):
        return
    folded = {f.casefold(): f for f in fields}
    for field_key, field_value in value.items():
        if not isinstance(field_key, str):
            matched = None
        elif depth in exact:
            matched = field_key if field_key in fields else None
        else:
            matched = folded.get(field_key.casefold())
        if matched is not None:
            _check_fields(field_value, fields[matched], f"{shown}/{field_key}", file, what, diags, depth + 1, exact)
        else:
            diags.append(config_errors.unknown_argument(file, Span(*key_position(value, field_key)), what,
                                                        f"{shown}/{field_key}",
                                                        did_you_mean(str(field_key), [str(f) for f in fields])))


def _default_kept(diagnostic: Diagnostic, default: Any, type_name: str) -> Diagnostic:
    """The warning for a value the argument's reader cannot read, naming the default it keeps: a
    duration's as Go prints one (``1m0s``).  A duration or a quantity falls back to its default where
    the plugin's parser does not read the text (tdm, rescheduling, extender, sla; usage), which the
    hint names."""
    if type_name == "duration":
        return config_errors.text_default_kept(diagnostic, duration_text(default), type_name)
    if type_name == "quantity":
        return config_errors.text_default_kept(diagnostic, repr(default), type_name)
    return config_errors.default_kept(diagnostic, default)


def argument_error(raw: Mapping | list, key: Any, value: Any, type_name: str, file: str, what: str,
               shown: str | None = None) -> Diagnostic:
    return config_errors.argument_type(file, Span(*position(raw, key)), what, shown or key, type_name, value)


def _literal_default(expr, type_name: str) -> Any:
    from fumarole.policy_lang import ast as A

    if isinstance(expr, A.Literal):
        if type_name == "float" and expr.kind == "int" and isinstance(expr.value, int):  # an int literal's value is one
            return float(expr.value)
        return expr.value
    if isinstance(expr, A.Unary):
        return -_literal_default(expr.operand, type_name)
    if isinstance(expr, A.ListLit):
        return [_literal_default(i, "string") for i in expr.items]
    if isinstance(expr, A.MapLit):
        return {_literal_default(k, "string"): _literal_default(v, "string") for k, v in expr.entries}
    raise ValueError("argument defaults are literals")

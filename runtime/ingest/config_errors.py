"""The diagnostics about a scheduler configuration (C codes) and scheduler options (O codes),
docs/diagnostics.md: a volcano-scheduler.conf that cannot be read, one whose actions, plugins
or arguments the library does not have, and combinations Volcano refuses.  One constructor per
problem (as policy_lang's ``declaration_errors.py``): the message and hint are written here
once, and the readers pass facts -- the file, where, names.  The lowest stage that reports
them (ingest) holds them; bundles and authoring report the rest from here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.runtime.api.quoting import clip


# -- C000 .. C005 a configuration that cannot be read --------------------------------------------------

def malformed_config(file: str, at: Span, message: str) -> Diagnostic:
    """The YAML reader's own message."""
    return Diagnostic("C000", message, file, at)


def config_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("C001", "a scheduler configuration must be a mapping", file, at)


def unknown_config_key(file: str, at: Span, key: object, hint: str | None) -> Diagnostic:
    return Diagnostic("C002", f"unknown configuration key '{key}'", file, at, hint=hint)


def _shape(file: str, at: Span, message: str) -> Diagnostic:
    return Diagnostic("C003", message, file, at)


def actions_not_a_string(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "actions must be a comma-separated string, e.g. \"enqueue, allocate, backfill\"")


def tiers_not_a_list(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "tiers must be a list of {plugins: [...]}")


def tier_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "a tier must be a mapping with a list of plugins")


def configuration_without_name(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "a configuration needs a name and arguments")


def configuration_arguments_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "configuration arguments must be a mapping")


def metrics_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "metrics must be a mapping (type, address, interval...)")


def metrics_value_not_a_scalar(file: str, at: Span, key: object) -> Diagnostic:
    """Volcano reads the block into a map[string]string: yaml.v2 refuses a mapping or a list there,
    and the whole configuration with it."""
    return _shape(file, at, f"metrics.{key} must be a single value (Volcano reads the metrics block as texts)")


def plugin_without_name(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "a plugin entry needs a name")


def plugin_arguments_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return _shape(file, at, "plugin arguments must be a mapping")


def unknown_switch(file: str, at: Span, key: object, plugin: str, hint: str | None) -> Diagnostic:
    return Diagnostic("C004", f"unknown plugin switch '{key}' on plugin '{plugin}'", file, at, hint=hint)


def switch_not_a_bool(file: str, at: Span, key: object, value: object) -> Diagnostic:
    return Diagnostic("C005", f"switch '{key}' must be true or false, not {value!r}", file, at)


# -- C010 .. C012 arguments ------------------------------------------------------------------------------

def unknown_argument(file: str, at: Span, what: str, name: str, hint: str | None) -> Diagnostic:
    """``what``: "plugin 'x'" or "action 'y'"; ``name`` the argument as written (a path for a field).
    A warning: Volcano never looks a key up that no plugin reads, so the configuration loads."""
    return Diagnostic("C010", f"{what} has no argument '{name}'; it is ignored", file, at, "warning",
                      hint or "Volcano ignores a key its plugins do not read")


def argument_not_modelled(file: str, at: Span, what: str, name: str, default: object) -> Diagnostic:
    """C010 as an error: a key Volcano reads but fumarole does not model, given a value other than
    Volcano's default (the one value fumarole models); ignoring it would diverge."""
    return Diagnostic("C010", f"argument '{name}' of {what} is read by Volcano but not modelled by fumarole "
                      f"beyond its default {_go_text(default)}", file, at,
                      hint="remove it, or give Volcano's default, to decide as Volcano does")


def missing_argument(file: str, at: Span, what: str, key: str, type_name: str) -> Diagnostic:
    return Diagnostic("C011", f"{what} needs argument '{key}' ({type_name})", file, at)


def argument_type(file: str, at: Span, what: str, name: str, type_name: str, value: object) -> Diagnostic:
    """An error as made: a value given on the command line must be right; a configuration's value
    becomes a warning by :func:`default_kept` or :func:`entry_left_out`."""
    article = "an" if type_name[0] in "aeiou" else "a"
    return Diagnostic("C012", f"argument '{name}' of {what} must be {article} {type_name}, not {clip(as_written(value))}",
                      file, at)


def as_written(value: object) -> str:
    """A configuration value as YAML spells it where Python's repr differs (null, true, false)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def default_kept(diagnostic: Diagnostic, default: object) -> Diagnostic:
    """C012 as a warning: the argument keeps its default, as Volcano's GetInt/GetFloat64/GetBool/GetString
    (pkg/scheduler/framework/arguments.go) log a wrongly typed value and keep the default."""
    return replace(diagnostic, severity="warning", message=f"{diagnostic.message}; the default {_go_text(default)} "
                   "is used", hint="Volcano's argument readers log a value they cannot read and keep the default")


# The parser a plugin hands an argument's text to, and texts it reads, by argument type.
TEXT_READERS = {"duration": "Go's time.ParseDuration does not read it (e.g. 90s, 1m30s, 1.5h, 500ms)",
                "quantity": "Kubernetes' resource.ParseQuantity does not read it (e.g. 250m, 1.5, 200Mi)"}


def text_default_kept(diagnostic: Diagnostic, default: str, type_name: str) -> Diagnostic:
    """C012 as a warning for a duration or quantity argument given a text (or another value) the
    parser the plugin hands it to does not read: Volcano's plugins keep their default then, most
    without a word (tdm's evict period, rescheduling's interval, extender's httpTimeout, usage's
    be_cpu / be_mem; sla leaves its waiting time unset)."""
    return replace(diagnostic, severity="warning", message=f"{diagnostic.message}; the default {default} is used",
                   hint=f"{TEXT_READERS[type_name]}: Volcano keeps the default")


def metrics_interval_default_kept(file: str, at: Span, value: str) -> Diagnostic:
    """C012 as a warning for a ``metrics.interval`` that is not a positive Go duration: the
    scheduler's metrics collection (cache.go) and the usage plugin's delay window (usage.go
    OnSessionOpen) both keep their 30s default then, without a word."""
    return Diagnostic("C012", f"metrics.interval must be a positive duration, not {clip(repr(value))}; "
                      "the default 30s is used", file, at, severity="warning",
                      hint=f"{TEXT_READERS['duration']}, or gives 0 or less: Volcano keeps the default")


def panicking_threshold(diagnostic: Diagnostic) -> Diagnostic:
    """C012 kept an error for a rescheduling threshold lowNodeUtilization's bare ``v.(int)`` panics
    on while the strategy runs in every session (an interval of 0 or less, with shuffle): no
    session of that configuration has a Volcano decision (bundles/refusals.py)."""
    return replace(diagnostic, message=f"{diagnostic.message} (lowNodeUtilization runs in every session: "
                   "the interval is 0 or less and shuffle asks for victims)",
                   hint="Volcano's lowNodeUtilization panics on it (`v.(int)`): give an integer")


def strict_value(diagnostic: Diagnostic) -> Diagnostic:
    """C012 kept an error for a ``strict`` argument: Volcano reads it with ``framework.Get``, whose
    mapstructure decoding of such a value fails and stops the scheduler (``klog.Fatalf``), so there
    is no Volcano decision to keep a default for."""
    return replace(diagnostic, hint="Volcano stops the scheduler on it (framework.Get cannot decode it: klog.Fatalf)")


def asserted_value(diagnostic: Diagnostic) -> Diagnostic:
    """C012 kept an error for an ``asserted`` argument: Volcano's plugin reads it with a bare type
    assertion (tdm's ``period.(string)``, rescheduling's ``intervalArg.(string)``), which panics on
    any other value, a null included, and takes the scheduler down: no Volcano decision exists."""
    return replace(diagnostic, hint="Volcano's plugin panics on it (a bare type assertion, `v.(string)`): give a text")


def machine_dependent(diagnostic: Diagnostic) -> Diagnostic:
    """C012 kept an error for a ``strict`` int argument given a number past Go's int64 (or NaN, an
    infinity): mapstructure converts it with ``int64(f)``, whose result Go leaves to the machine
    (amd64 gives the minimum int, arm64 saturates), so no one Volcano decision exists to follow."""
    return replace(diagnostic, hint="Go's int64 conversion of it depends on the machine "
                                    "(amd64 and arm64 differ): give an int64")


def entry_left_out(diagnostic: Diagnostic) -> Diagnostic:
    """C012 as a warning for one entry of a map argument: the entry is read as absent and the map
    keeps its other entries (the hint says so: the section-level hint, about a section that is
    not a mapping, misled here)."""
    return replace(diagnostic, severity="warning", message=f"{diagnostic.message}; the entry is left out",
                   hint="the map keeps its other entries; give this one a value of the type named")


def section_absent(diagnostic: Diagnostic) -> Diagnostic:
    """C012 as a warning for a section (``sra: 3``) that is not a mapping or a list: read as absent,
    so each argument under it keeps its default, as Volcano's plugins read such a section as none
    (deviceshare's parseExclusiveRules: a GPUExclusiveRules that is not a list gives no rules)."""
    return replace(diagnostic, severity="warning", message=f"{diagnostic.message}; it is read as absent",
                   hint="Volcano reads a section that is not a mapping or a list as absent")


def section_ignored(diagnostic: Diagnostic, section: str) -> Diagnostic:
    """C012 as a warning for a key that is not a text in a section the plugin reads as a map of text
    keys (usage's ``thresholds`` and ``estimator``, usage.go getUsageSectionArgs): the plugin gives
    up on the whole section, so every argument under it keeps its default."""
    return replace(diagnostic, severity="warning",
                   message=f"{diagnostic.message}; the whole '{section}' section is ignored",
                   hint="Volcano's plugin reads nothing of a section with a key that is not a text: "
                        "quote the key, or remove it")


def _go_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, (str, list, dict)) else str(value)


# -- C020 .. C022 actions and plugins the library has not, or Volcano refuses ----------------------------

def _available(names: Iterable[str]) -> str:
    return f"available: {', '.join(sorted(names))}"


def unknown_action(file: str, at: Span, action: str, hint: str | None, actions: Iterable[str]) -> Diagnostic:
    return Diagnostic("C020", f"unknown action '{action}'", file, at, hint=hint or _available(actions))


def configuration_of_unknown_action(file: str, at: Span, action: str, hint: str | None) -> Diagnostic:
    return Diagnostic("C020", f"configuration for unknown action '{action}'", file, at, hint=hint)


def unknown_plugin(file: str, at: Span, plugin: str, hint: str | None, plugins: Iterable[str]) -> Diagnostic:
    return Diagnostic("C021", f"unknown plugin '{plugin}'", file, at, hint=hint or _available(plugins))


def hierarchical_drf_beside_proportion(file: str, at: Span) -> Diagnostic:
    return Diagnostic("C022", "proportion and drf with enableHierarchy cannot share a tier "
                      "(Volcano rejects this configuration)", file, at)


def exclusive_switches(file: str, at: Span, plugin: str, second: str, first: str, fatal: str) -> Diagnostic:
    return Diagnostic("C022", f"{plugin} cannot turn on {second} together with {first} "
                      f"(Volcano exits when the session opens: \"{fatal}\")", file, at)


# -- O001 .. O003 scheduler options ------------------------------------------------------------------------

def unknown_option(file: str, at: Span, what: str, name: str, hint: str) -> Diagnostic:
    """``what``: "option" or "scheduler option"; ``name`` with its flag prefix, if any."""
    return Diagnostic("O001", f"unknown {what} {name}", file, at, hint=hint)


def bad_option_value(file: str, at: Span, message: str) -> Diagnostic:
    """``message``: the option reader's account of the value (scheduler_options.OptionError)."""
    return Diagnostic("O002", message, file, at)


def options_not_a_mapping(file: str, at: Span) -> Diagnostic:
    return Diagnostic("O002", "schedulerOptions must be a mapping of option names to values", file, at)


def option_not_modelled(file: str, at: Span, name: str, why: str, modelled: Iterable[str]) -> Diagnostic:
    return Diagnostic("O003", f"Volcano's {name} is not modelled: {why}", file, at,
                      hint="modelled options: " + ", ".join(modelled))


# -- C030 .. C033 warnings: wiring that does not do what it seems to ------------------------------------------

def plugin_listed_twice(file: str, at: Span, plugin: str, first_tier: int) -> Diagnostic:
    return Diagnostic("C030", f"plugin '{plugin}' is listed twice (also in tier {first_tier})", file, at, "warning",
                      "each listing registers its hooks again; keep one (a victim rule that must hold whatever tier "
                      "decides is a veto: list it once and set `combine: veto` for its hook, docs/hooks.md)")


def intersect_cannot_protect(file: str, at: Span, plugin: str, hook: str, veto_hint: str) -> Diagnostic:
    return Diagnostic(
        "C031", f"plugin '{plugin}' answers {hook}, combined by Volcano's tiered intersect: an empty answer lets "
        "the next tier decide, so it cannot protect a task", file, at, "warning",
        f"to remove what it forbids and keep Volcano's choice, set `hooks: {{{hook}: {{combine: veto}}}}` "
        f"({veto_hint}); if it is meant to choose victims as Volcano's plugins do, keep intersect")


def intersect_all_takes_later_tiers(file: str, at: Span, hook: str, tiers: tuple[int, int], later: list[str],
                                    plugin: str, veto_hint: str) -> Diagnostic:
    """``tiers``: the first tier of Volcano's plugins answering ``hook`` and the next one, whose
    plugins ``later`` Volcano never asks once the first has decided."""
    return Diagnostic(
        "C032", f"intersect-all on {hook} also intersects tier {tiers[1]}'s {', '.join(later)}, which "
        f"Volcano never asks once tier {tiers[0]} has decided: fewer victims than Volcano takes",
        file, at, "warning",
        f"for '{plugin}' to veto while Volcano's plugins choose as Volcano does, use `combine: veto` ({veto_hint})")


def action_skips_rule(file: str, at: Span, action: str, hook: str, plugin: str, hint: str) -> Diagnostic:
    return Diagnostic("C033", f"action '{action}' evicts without asking {hook}: plugin '{plugin}''s rule does not "
                      "hold there", file, at, "warning", hint)

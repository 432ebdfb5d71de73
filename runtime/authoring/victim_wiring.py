"""What ``check`` says about how a bundle's victim rules are wired (docs/hooks.md, "Vetoes").

A site rule that protects tasks holds only where it is asked and only if its
answer is combined as a veto.  Three mistakes look right and are not:

* C031: a site plugin answers a victims hook combined by Volcano's tiered
  ``intersect`` and another plugin answering it comes later: an empty answer,
  or one that empties the tier's intersection, hands the decision to the later
  plugins, so the plugin cannot protect anything;
* C032: ``intersect-all`` with Volcano's plugins answering the hook in more than
  one tier: their later tiers, which Volcano never asks once a tier has
  decided, are intersected too, and fewer victims are taken than Volcano takes;
* C033: an action that evicts never asks a hook a site plugin states its rule
  in, so the rule does not hold in that action.  Rules come in two families,
  preemption (``preempt_candidate``, ``preemptable``) and reclaim
  (``reclaim_candidate``, ``reclaimable``), ``unified_evictable`` in both; an
  action belongs to the family whose candidate hook it asks (one asking
  neither, a bundle's own evicting action, to both), and must ask every hook of
  its family that a site plugin answers.

``veto`` is the combinator each of the first two likely meant.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from fumarole.policy_lang import ast as A
from fumarole.policy_lang.checker import CheckedModule
from fumarole.policy_lang.diagnostics import Diagnostic, Span
from fumarole.policy_lang.walk import preorder
from fumarole.runtime.ingest.scheduler_config import PluginEntry, SchedulerConfig
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.ingest.yamlpos import key_position

VICTIM_HOOKS = ("preemptable", "reclaimable", "unified_evictable")
VETO_HINT = "docs/hooks.md, \"Vetoes\""


def victim_wiring(config: SchedulerConfig, checked: Iterable[CheckedModule], site: set[str],
                  overrides: Mapping[str, Any], hooks_doc: Mapping[str, Any], file: str) -> list[Diagnostic]:
    """C031, C032 and C033 for a bundle whose own plugins are ``site``."""
    modules = {(c.module.kind, c.module.name): c for c in checked}
    hooks_of = {name: {h.name for h in c.hooks} for (kind, name), c in modules.items() if kind == "plugin"}
    gates = {name: spec.get("gate") for name, spec in hooks_doc["hooks"].items()}
    combine = {name: (overrides.get(name) or {}).get("combine", spec["combine"])
               for name, spec in hooks_doc["dispatch"].items()}
    out: list[Diagnostic] = []
    for hook in VICTIM_HOOKS:
        answering = [(number, entry) for number, tier in enumerate(config.tiers, 1) for entry in tier
                     if hook in hooks_of.get(entry.name, ()) and entry.enabled(gates.get(hook))]
        where = Span(*key_position(overrides, hook)) if hook in overrides else None
        if combine[hook] == "intersect":
            out += [_tiered(hook, entry, file) for i, (_n, entry) in enumerate(answering)
                    if entry.name in site and i + 1 < len(answering)]
        elif combine[hook] == "intersect-all":
            volcano_tiers = sorted({n for n, entry in answering if entry.name not in site})
            if len(volcano_tiers) > 1 and any(entry.name in site for _n, entry in answering):
                out.append(_dragged(hook, answering, volcano_tiers, site, file, where))
    out += _ignored_rules(config, modules, hooks_of, site, file)
    return out


def _tiered(hook: str, entry: PluginEntry, file: str) -> Diagnostic:
    return config_errors.intersect_cannot_protect(file, Span(*entry.pos), entry.name, hook, VETO_HINT)


def _dragged(hook: str, answering: list[tuple[int, PluginEntry]], volcano_tiers: list[int], site: set[str],
             file: str, where: Span | None) -> Diagnostic:
    later = [e.name for n, e in answering if n in volcano_tiers[1:] and e.name not in site]
    first = next(e for _n, e in answering if e.name in site)
    return config_errors.intersect_all_takes_later_tiers(file, where or Span(*first.pos), hook,
                                                         (volcano_tiers[0], volcano_tiers[1]), later, first.name,
                                                         VETO_HINT)


FAMILIES = {
    "preempt_candidate": ("preempt_candidate", "preemptable", "unified_evictable"),
    "reclaim_candidate": ("reclaim_candidate", "reclaimable", "unified_evictable"),
}


def _ignored_rules(config: SchedulerConfig, modules: Mapping[tuple[str, str], CheckedModule],
                   hooks_of: Mapping[str, set[str]], site: set[str], file: str) -> list[Diagnostic]:
    """C033: each evicting action that never asks a hook of its family a site plugin answers."""
    plugins = list(dict.fromkeys(e.name for tier in config.tiers for e in tier if e.name in site))
    out: list[Diagnostic] = []
    for action in dict.fromkeys(config.actions):
        checked = modules.get(("action", action))
        if checked is None or not plugins:
            continue
        asked, evicts = _reach(checked, modules)
        if not evicts:
            continue
        families = [hooks for candidate, hooks in FAMILIES.items() if candidate in asked] or list(FAMILIES.values())
        family = set().union(*families)
        for plugin in plugins:
            for hook in sorted(hooks_of.get(plugin, set()) & family - asked):
                out.append(config_errors.action_skips_rule(file, Span(*config.action_pos), action, hook, plugin,
                                                           _ask_instead(hook, asked & family)))
    return out


def _ask_instead(hook: str, asked: set[str]) -> str:
    if asked:
        return f"it asks {', '.join(sorted(asked))}: state the rule there too (preempt_candidate and " \
               "reclaim_candidate hold in every evicting action of the standard library)"
    return "state the rule in preempt_candidate / reclaim_candidate, which every evicting action of the " \
           "standard library asks, or have the action ask it"


def _reach(action: CheckedModule, modules: Mapping[tuple[str, str], CheckedModule]) -> tuple[set[str], bool]:
    """The session hooks an action's code can reach (through its definitions and those of the
    modules it uses, functions passed as values included), and whether it evicts."""
    defs: dict[str, A.FuncDef] = {}
    for checked in _used(action, modules):
        defs.update({d.name: d for d in checked.module.decls if isinstance(d, A.FuncDef)})
    asked: set[str] = set()
    evicts = False
    seen: set[str] = set()
    pending: list[Any] = [d for d in action.module.decls if isinstance(d, A.HookDef)]
    while pending:
        for node in preorder(pending.pop()):
            if isinstance(node, A.Name):
                asked.add(node.id)
                if node.id in defs and node.id not in seen:
                    seen.add(node.id)
                    pending.append(defs[node.id])
            elif isinstance(node, A.Call) and isinstance(node.func, A.Attr) and node.func.name == "evict":
                evicts = True
    return asked, evicts


def _used(start: CheckedModule, modules: Mapping[tuple[str, str], CheckedModule]) -> Iterator[CheckedModule]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        checked = stack.pop()
        yield checked
        for decl in checked.module.decls:
            if isinstance(decl, A.Use) and decl.name not in seen and ("module", decl.name) in modules:
                seen.add(decl.name)
                stack.append(modules[("module", decl.name)])

"""Instrumented policies: every decision counted, for coverage and for explaining a failed test.

The normal compiled code has no probes at all.  When ``fumarole test`` needs
them (``--coverage``, or to explain a failure), it compiles a second copy of
the policies with :data:`fumarole.policy_lang.compiler.ProbeSite` set: each condition
becomes ``_probe(n, cond)``, each ``victim x`` records ``_pick(n, x)``, and
each ``for`` iteration calls ``_iter(item)``.  :class:`Probes` receives those
calls; it always counts outcomes and, when asked, also keeps the sequence of
events so that a decision can be tied to the task it was about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from fumarole.policy_lang import ast as A
from fumarole.policy_lang.driver import check_module, compile_checked
from fumarole.policy_lang.fmt import expr_text, stmt_text
from fumarole.policy_lang.parser import parse
from fumarole.runtime.bundles.environment import load_environment
from fumarole.runtime.bundles.library import CompiledPolicy, Library
from fumarole.runtime.framework.namespace import namespace

# Wraps a policy's builder: (kind, name, builder, {hook: HookSite}) -> builder.
Watch = Callable[[str, str, Callable, dict[str, "HookSite"]], Callable]


@dataclass(frozen=True)
class Site:
    """One decision point of a policy file."""

    file: str
    line: int
    col: int
    kind: str  # guard, if, while, drain, filter, choice (a ... if c else ...), victim
    text: str  # the condition (for a victim, the selected expression)
    rule: str  # the statement it decides, as the formatter writes it

    @property
    def outcomes(self) -> int:
        """How many outcomes coverage expects: a victim rule fires; a condition is true and false."""
        return 1 if self.kind == "victim" else 2

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class HookSite:
    """Where a plugin implements a hook, and its body when that is one expression."""

    location: str
    expression: str = ""
    lines: tuple[int, int] = (0, 0)  # the lines of the hook's declaration: [first, end)

    def holds(self, site: Site) -> bool:
        """The site is in the hook's own body (not in a helper it calls)."""
        return site.file == self.location.rsplit(":", 2)[0] and self.lines[0] <= site.line < self.lines[1]


def describe(file: str, node: A.Expr, owner: object) -> Site:
    """The site of a condition (or a victim's value) inside ``owner``."""
    text = expr_text(node)
    if isinstance(owner, A.When):
        kind, rule = "guard", stmt_text(owner)
    elif isinstance(owner, A.If):
        first = owner.branches[0][0] is node
        kind, rule = "if", f"{'if' if first else 'elif'} {text}"
    elif isinstance(owner, A.While):
        kind, rule = "while", f"while {text}"
    elif isinstance(owner, A.Drain):
        kind, rule = "drain", f"drain {owner.var} from {expr_text(owner.queue)} while {text}"
    elif isinstance(owner, A.Conditional):
        kind, rule = "choice", expr_text(owner)
    elif isinstance(owner, A.Victim):
        kind, rule = "victim", stmt_text(owner)
    else:
        kind, rule = "filter", f"if {text}"
    return Site(file, node.span.line, node.span.col, kind, text, rule)


class Probes:
    """The receiving end of instrumented code: sites, outcome counts and (optionally) events."""

    def __init__(self, keep_events: bool = False) -> None:
        self.sites: list[Site] = []
        self.counts: list[list[int]] = []  # per site: [times false, times true]
        self._index: dict[tuple[str, int, int, str], int] = {}
        self.events: list[tuple] | None = [] if keep_events else None
        self.by_policy: dict[tuple[str, str], set[int]] = {}  # (kind, name) -> the sites its code contains
        self.used: set[tuple[str, str]] = set()  # policies a session instantiated
        self.files: dict[tuple[str, str], str] = {}  # (kind, name) -> its policy file
        self._current: set[int] = set()  # sites of the policy being compiled

    def site(self, file: str, node: A.Expr, owner: object) -> int:
        """Number a decision point (the same place always gets the same number)."""
        described = describe(file, node, owner)
        key = (file, described.line, described.col, described.kind)
        number = self._index.get(key)
        if number is None:
            number = self._index[key] = len(self.sites)
            self.sites.append(described)
            self.counts.append([0, 0])
        self._current.add(number)
        return number

    def probe(self, number: int, value: Any) -> Any:
        self.counts[number][bool(value)] += 1
        if self.events is not None:
            self.events.append(("probe", number, bool(value)))
        return value

    def pick(self, number: int, task: Any) -> Any:
        self.counts[number][1] += 1
        if self.events is not None:
            self.events.append(("pick", number, task))
        return task

    def iterate(self, item: Any) -> None:
        if self.events is not None:
            self.events.append(("iter", item))

    # -- compiling ---------------------------------------------------------------------------------
    def instrument(self, library: Library, watch: Watch | None = None,
                   only: frozenset[tuple[str, str]] | None = None) -> Library:
        """A copy of ``library`` compiled with probes reporting here (sources and names unchanged).
        With ``only``, just those (kind, name) plugins and actions get probes (a bundle's own, since
        the others never run in its sessions: compiling a policy again means parsing it again)."""
        env = load_environment()
        tables: dict[str, dict[str, CompiledPolicy]] = {"plugin": {}, "action": {}, "module": {}}
        by_filename = dict(library.modules_by_filename)
        for kind, table in (("module", library.modules), ("plugin", library.plugins), ("action", library.actions)):
            for name, policy in table.items():
                if only is not None and kind != "module" and (kind, name) not in only:
                    tables[kind][name] = policy
                    continue
                file = policy.module.file
                checked = library.checked[name] if kind == "module" else \
                    check_module(env, parse(library.sources[file], file), dict(library.checked))
                self._current = self.by_policy.setdefault((kind, name), set())
                self.files[(kind, name)] = file
                compiled = compile_checked(checked, self.site)
                scope = namespace()
                scope.update(_probe=self.probe, _pick=self.pick, _iter=self.iterate)
                exec(compiled.code, scope)  # noqa: S102 - generated by fumarole.policy_lang.compiler from checked policies
                builder = self._marking(kind, name, scope["__build__"])
                if watch is not None:
                    hooks = {h.name: HookSite(f"{file}:{h.decl.name_span.line}:{h.decl.name_span.col}",
                                              "" if isinstance(h.decl.body, tuple) else expr_text(h.decl.body),
                                              (h.decl.span.line, max(h.decl.span.end_line, h.decl.span.line + 1)))
                             for h in checked.hooks}
                    builder = watch(kind, name, builder, hooks)
                tables[kind][name] = CompiledPolicy(compiled, builder)
                by_filename[compiled.filename] = compiled
        return Library(tables["plugin"], tables["action"], tables["module"], by_filename, library.sources,
                       library.warnings, library.checked)

    def _marking(self, kind: str, name: str, builder: Callable) -> Callable:
        def build(*args: Any) -> Any:
            self.used.add((kind, name))
            return builder(*args)
        return build

    def used_files(self) -> set[str]:
        """The policy files of every policy some session used (modules count where a user of them ran)."""
        return {self.files[policy] for policy in self.used if policy in self.files}

    def used_sites(self) -> list[int]:
        """The sites in the code of every policy some session used."""
        return sorted({n for policy in self.used for n in self.by_policy.get(policy, ())})

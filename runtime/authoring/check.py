"""``fumarole check``: every problem in every input, in one pass, before anything runs.

Inputs are policy files, bundle folders and manifests, ``volcano-scheduler.conf``
files, scenario files, cluster dumps and the hook catalogue -- named directly or
found in folders (recursively; what a folder holds is recognised by its
content, and files that are none of these are skipped).  Each input goes
through every stage that applies to it, and a stage that fails does not stop
the others: a bundle with a syntax error in one plugin still has its manifest
validated against the JSON Schema, its other plugins checked and its tiers
checked against every plugin that parsed.

Nothing is compiled or run.  Wiring checks (plugin names, typed arguments,
hook combinators) use :func:`fumarole.runtime.bundles.bundle.build_bundle` over a library of
*signatures*: the checked modules' names and arguments, which is all wiring
needs and exists even for a plugin whose body has errors.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from fumarole.policy_lang.checker import CheckedModule
from fumarole.policy_lang.codes import ERRORS_WHEN_STRICT, STRICT_ONLY
from fumarole.policy_lang.compiled import CompiledModule
from fumarole.policy_lang.driver import compile_checked
from fumarole.policy_lang.diagnostics import Diagnostic, FumaroleError, Span
from fumarole.policy_lang import ast as A
from fumarole.policy_lang import rule_errors
from fumarole.policy_lang import file_errors
from fumarole.policy_lang.lint import never_matching
from fumarole.policy_lang.walk import preorder
from fumarole.runtime.authoring.victim_wiring import victim_wiring
from fumarole.runtime.authoring import scenario_errors
from fumarole.runtime.authoring.scenario_extenders import read_extenders
from fumarole.runtime.authoring.scenario_keys import unknown_keys
from fumarole.runtime.bundles.bundle import build_bundle, load_bundle
from fumarole.runtime.bundles.environment import STDLIB, hooks_document
from fumarole.runtime.bundles.library import (
    CheckedSources,
    CompiledPolicy,
    Library,
    check_sources,
    check_sources_cached,
    policy_files,
)
from fumarole.runtime.bundles.manifest import (
    MANIFEST,
    manifest_config_document,
    manifest_scheduler_options,
    manifest_sources,
)
from fumarole.runtime.bundles.schemas import schema_diagnostics
from fumarole.runtime.bundles import bundle_errors
from fumarole.runtime.ingest import config_errors
from fumarole.runtime.authoring.process_state_input import declared_process_states, read_process_inputs
from fumarole.runtime.ingest.kube import KINDS, cluster_from_objects, load_cluster
from fumarole.runtime.ingest.scheduler_options import DEFAULT_OPTIONS
from fumarole.runtime.ingest.scheduler_config import SchedulerConfig, read_config
from fumarole.runtime.ingest.source import decode_file, display_path, read_text
from fumarole.runtime.ingest.yamlpos import YamlError, load, load_all, position

INPUT_SUFFIXES = (".policy", ".yaml", ".yml", ".conf")
_TOP_KEY = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:", re.MULTILINE)
_BUNDLE_KIND = re.compile(r"^kind:[ \t]*[\"']?PolicyBundle\b", re.MULTILINE)
# Traces and sweep files are validated by the commands that read them (`replay`, `sweep`), a later stage.
_WHATIF_KIND = re.compile(r"^kind:[ \t]*[\"']?(Trace|Sweep)\b", re.MULTILINE)
_HEADER = re.compile(r"^[ \t]*(plugin|action|module)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
# A cluster dump holds objects of the kinds a session reads (other manifests, e.g. Deployments, are not inputs).
_CLUSTER_KIND = re.compile(r"^[ \t-]*kind:[ \t]*[\"']?(%s|List)\b" % "|".join(KINDS), re.MULTILINE)


@dataclass
class CheckReport:
    """What ``check`` found: the files examined and every diagnostic, sorted by place."""

    files: list[str]
    diagnostics: list[Diagnostic]
    sources: dict[str, str] = field(default_factory=dict)

    def count(self, severity: str) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    @property
    def unable_to_run(self) -> bool:
        """An input could not be read or named nothing checkable: the command itself failed (exit 2)."""
        return any(d.code in ("F001", "F002", "F003", "F004") for d in self.diagnostics)



def node_by_node(checked: CheckedModule) -> list[Diagnostic]:
    """W230 (strict): node rules the fast engine must run node by node, and why."""
    if not checked.ok or checked.module.kind not in ("plugin", "action"):
        return []
    return [rule_errors.no_batch_form(f.file, Span(f.line, f.col), f.rule, f.reason)
            for f in compile_checked(checked).batch_fallbacks]

def check_paths(paths: Sequence[str], strict: bool = False) -> CheckReport:
    """Check every input under ``paths``; never raises for a problem in an input."""
    run = _Run(strict)
    for text in paths:
        run.add(Path(text))
    return run.finish()


def classify(path: Path, text: str) -> str | None:
    """What a file is: policy, bundle, scenario, hooks, conf, cluster or whatif (None: not a fumarole input).

    Decided from the name and the top-level keys, read from the text so that a
    file whose YAML is broken is still recognised and its error reported.
    """
    if path.suffix == ".policy":
        return "policy"
    if path.name == MANIFEST or _BUNDLE_KIND.search(text):
        return "bundle"
    if _WHATIF_KIND.search(text):
        return "whatif"
    keys = set(_TOP_KEY.findall(text))
    if keys & {"expect", "expectHooks"}:
        return "scenario"
    if {"hooks", "dispatch"} <= keys:
        return "hooks"
    if keys & {"actions", "tiers", "configurations"} or path.suffix == ".conf":
        return "conf"
    if _CLUSTER_KIND.search(text):
        return "cluster"
    return None


def _stdlib() -> CheckedSources:
    """The standard library, checked once per process (per working folder: file names are relative to it)."""
    return _stdlib_from(Path.cwd())


@lru_cache(maxsize=4)
def _stdlib_from(cwd: Path) -> CheckedSources:
    return check_sources_cached((display_path(p), p.read_text()) for p in policy_files(STDLIB))


def _not_runnable(*_args: Any) -> dict:
    raise RuntimeError("a library of signatures (fumarole check) cannot run")


_NO_CODE = compile("", "<signature only>", "exec")  # a signature library's modules are never run


def signature_library(checked: Iterable[CheckedModule], sources: dict[str, str]) -> Library:
    """A Library with each policy's name, hooks and typed arguments, and no code: enough for wiring checks."""
    tables: dict[str, dict[str, CompiledPolicy]] = {"plugin": {}, "action": {}, "module": {}}
    for c in checked:
        m = c.module
        if m.kind in tables:
            signature = CompiledModule(m.kind, m.name, m.file, None, _NO_CODE, [], tuple(h.name for h in c.hooks),
                                       dict(c.args), dict(c.arg_types))
            tables[m.kind][m.name] = CompiledPolicy(signature, _not_runnable)
    return Library(tables["plugin"], tables["action"], tables["module"], {}, sources)


class _Run:
    """One ``check`` invocation: gathers inputs, then checks each kind of input in turn."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.diags: list[Diagnostic] = []
        self.sources: dict[str, str] = {}
        self.inputs: dict[Path, str] = {}  # resolved path -> kind, in the order found
        self.bundles_done: set[Path] = set()
        self.claimed: set[Path] = set()  # policy files checked as part of a bundle
        self.files: list[str] = []
        self.spec_fields_read: set[str] = set()  # Queue spec fields a checked policy reads by name

    # -- gathering ---------------------------------------------------------------------------
    def add(self, path: Path) -> None:
        if not path.exists():
            self.diags.append(file_errors.no_such_path(path))
        elif path.is_dir():
            for found in sorted(path.rglob("*")):
                parts = found.relative_to(path).parts
                if found.suffix in INPUT_SUFFIXES and found.is_file() and not any(
                        p.startswith(".") or p == "__pycache__" for p in parts):
                    self._take(found, explicit=False)
        else:
            self._take(path, explicit=True)

    def _take(self, path: Path, explicit: bool) -> None:
        resolved = path.resolve()
        if resolved in self.inputs:
            return
        text = self._read(path)
        if text is None:
            return
        kind = classify(path, text)
        if kind is None:
            if explicit:
                self.diags.append(file_errors.not_an_input(display_path(path)))
            return
        self.inputs[resolved] = kind

    def _read(self, path: Path) -> str | None:
        file = display_path(path)
        try:
            text = read_text(path, file)
        except FumaroleError as err:
            self.diags += err.diagnostics
            return None
        self.sources[file] = text
        return text

    # -- checking ----------------------------------------------------------------------------
    def finish(self) -> CheckReport:
        base = _stdlib()
        self.diags += [d for d in base.diagnostics if d.severity == "error"]
        self.sources.update(base.sources)
        for path, kind in list(self.inputs.items()):
            if kind == "bundle":
                self._guarded(path, self._bundle, path)
        for path, kind in self.inputs.items():
            if kind == "policy" and path not in self.claimed:
                enclosing = enclosing_bundle(path)
                if enclosing is not None:
                    self._guarded(enclosing, self._bundle, enclosing)
        standalone = [(display_path(p), self.sources[display_path(p)]) for p, kind in self.inputs.items()
                      if kind == "policy" and p not in self.claimed]
        # The standard library's own files were checked as the base already: reuse that.
        same = {file for file, text in standalone if base.sources.get(file) == text}
        self._reuse(same, base)
        others = [(file, text) for file, text in standalone if file not in same]
        if others:
            self._policies(others, base)
        checks = {"conf": self._conf, "scenario": self._scenario, "cluster": self._cluster, "hooks": self._hooks}
        for path, kind in self.inputs.items():
            if kind in checks:
                self._guarded(path, checks[kind], path)
        for path in self.inputs:
            self._file(display_path(path))
        return CheckReport(self.files, self._final(), self.sources)

    def _file(self, file: str) -> None:
        if file not in self.files:
            self.files.append(file)

    def _guarded(self, path: Path, check: Callable[..., None], *args: Any) -> None:
        """A bug in one check must not hide every other result: report it as F004 and go on."""
        try:
            check(*args)
        except Exception as exc:  # noqa: BLE001 - the promise is: never a traceback
            if os.environ.get("FUMAROLE_DEBUG"):
                raise
            self.diags.append(file_errors.check_crashed(display_path(path), exc))

    def _final(self) -> list[Diagnostic]:
        seen: set[tuple] = set()
        out: list[Diagnostic] = []
        for d in self.diags:
            if d.code in STRICT_ONLY and not self.strict:
                continue
            if d.code in ERRORS_WHEN_STRICT and self.strict:
                d = replace(d, severity="error")
            key = (d.file, d.span.line, d.span.col, d.code, d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
        return sorted(out, key=lambda d: (d.file, d.span.line, d.span.col, d.code))

    def _policies(self, files: list[tuple[str, str]], base: CheckedSources | None) -> CheckedSources:
        """Check policy files over a base; lint them when strict.  Returns the result for wiring."""
        result = check_sources(files, base.modules if base else None)
        self.diags += result.diagnostics
        for checked in result.checked:
            self.spec_fields_read |= spec_fields_read(checked.module)
        for file, _text in files:
            self._file(file)
        if self.strict:
            for checked in result.checked:
                self.diags += never_matching(checked.module)
                self.diags += node_by_node(checked)
        return result

    def _reuse(self, files: set[str], base: CheckedSources) -> None:
        """Report standard-library files from the base check (its errors are reported already)."""
        for file in sorted(files):
            self._file(file)
        self.diags += [d for d in base.diagnostics if d.file in files and d.severity != "error"]
        if self.strict:
            for checked in base.checked:
                if checked.module.file in files:
                    self.diags += never_matching(checked.module)

    def _wiring(self, config: SchedulerConfig, checked: list[CheckedModule], unparsed: dict[str, set[str]],
                file: str, name: str = "", revision: str = "", hooks: Any = None, loaded: bool = True) -> None:
        """Actions, plugins, arguments and hook overrides, against the signatures of ``checked``.

        Entries naming a policy whose file does not parse are left out: its syntax
        error is the problem, not an "unknown plugin".
        """
        library = signature_library(checked, {})
        tiers = tuple(tuple(e for e in tier if e.name not in unparsed["plugin"]) for tier in config.tiers)
        config = replace(config, tiers=tiers,
                         actions=tuple(a for a in config.actions if a not in unparsed["action"]),
                         configurations={k: v for k, v in config.configurations.items()
                                         if k not in unparsed["action"]})
        overrides = hooks if isinstance(hooks, dict) and all(isinstance(v, dict) for v in hooks.values()) else {}
        try:
            bundle = build_bundle(config, library, name, revision, overrides, file, loaded=loaded)
        except FumaroleError as err:
            self.diags += err.diagnostics
        else:
            self.diags += bundle.warnings
            volcano = {c.module.name for c in _stdlib().checked if c.module.kind == "plugin"}
            site = {c.module.name for c in checked if c.module.kind == "plugin" and c.module.name not in volcano}
            self.diags += victim_wiring(config, checked, site, overrides, hooks_document(), file)
        if self.strict:
            self.diags += duplicate_plugins(config)

    def _bundle(self, path: Path) -> None:
        manifest = path / MANIFEST if path.is_dir() else path
        key = manifest.resolve()
        if key in self.bundles_done:
            return
        self.bundles_done.add(key)
        file = display_path(manifest)
        self._file(file)
        text = self.sources[file] if file in self.sources else self._read(manifest)
        if text is None:
            return
        doc = self._yaml(text, file, "B000")
        if doc is None:
            return
        if not isinstance(doc, dict):
            self.diags.append(bundle_errors.manifest_not_a_mapping(file))
            return
        diags = schema_diagnostics(doc, "bundle.schema.json", file, "B001")
        files: list[tuple[str, str]] = []
        sources = doc.get("sources")
        if isinstance(sources, list) and all(isinstance(s, str) for s in sources):
            try:
                files, source_diags = manifest_sources(doc, manifest.parent, file)
            except FumaroleError as err:  # a source that cannot be read (F001, at the source's first bad byte)
                files, source_diags = [], list(err.diagnostics)
            diags += source_diags
        for source_file, source_text in files:
            self.sources[source_file] = source_text
            self.claimed.add(Path(source_file).resolve())
        uses = doc.get("uses")
        base = _stdlib() if not isinstance(uses, list) or "volcano" in uses else None
        result = self._policies(files, base)
        checked = (base.checked if base else []) + result.checked
        config, config_diags = read_config(manifest_config_document(doc), file)
        config_diags += manifest_scheduler_options(doc, file)[1]
        given = doc.get("metadata")
        metadata = given if isinstance(given, dict) else {}
        before = len(self.diags)
        self._wiring(config, checked, _unparsed(files, result), file, str(metadata.get("name", "")),
                     str(metadata.get("revision", "")), doc.get("hooks"))
        # The schema and the wiring checks see the same YAML: report each place once, with the more
        # specific message of the later check (an unknown switch, a combinator with its did-you-mean).
        taken = {d.span.line for d in config_diags + self.diags[before:]}
        self.diags += [d for d in diags if d.span.line not in taken] + config_diags

    def _yaml(self, text: str, file: str, code: str, many: bool = False) -> Any:
        """The parsed document(s), or None after recording the YAML error under ``code``."""
        try:
            return load_all(text) if many else load(text)
        except YamlError as exc:
            self.diags.append(Diagnostic(code, exc.message, file, Span(exc.line, exc.col)))
            return None

    def _conf(self, path: Path) -> None:
        file = display_path(path)
        doc = self._yaml(self.sources[file], file, "C000")
        if doc is None:
            return
        self._scheduler(doc, file)

    def _scheduler(self, doc: Any, file: str, loaded: bool = True) -> None:
        """A volcano-scheduler.conf document (on its own, or inline in a scenario: not ``loaded``,
        as ``fumarole test`` builds it), over the standard library."""
        config, diags = read_config(doc, file)
        self.diags += diags
        base = _stdlib()
        self._wiring(config, base.checked, {"plugin": set(), "action": set()}, file, loaded=loaded)

    def _scenario(self, path: Path) -> None:
        file = display_path(path)
        text = self.sources[file]
        doc = self._yaml(text, file, "S001")
        if doc is None:
            return
        if not isinstance(doc, dict):
            self.diags.append(scenario_errors.not_a_mapping(file))
            return
        self.diags += unknown_keys(doc, file)
        self.diags += read_extenders(doc, file)[1]
        if "bundle" in doc:
            # As `fumarole test` loads it (bundles.bundle.load_bundle): a folder or a bundle.yaml is a
            # bundle, any other file a volcano-scheduler.conf over the standard library.
            target = path.parent / str(doc["bundle"])
            if (target / MANIFEST).is_file() or (target.is_file() and target.name == MANIFEST):
                self._guarded(target, self._bundle, target)
            elif target.is_file():
                if self._read(target) is not None:
                    self._guarded(target, self._conf, target)
            else:
                self.diags.append(file_errors.no_such_bundle(file, Span(*position(doc, "bundle")), target))
        elif "scheduler" in doc:
            self._scheduler(doc["scheduler"], file, loaded=False)
        else:
            self.diags.append(scenario_errors.no_scheduler(file, Span(*position(doc))))
        if "schedulerOptions" in doc or "processState" in doc:
            self._process_inputs(doc, path, file)
        try:
            if "cluster" in doc:
                cluster_path = path.parent / str(doc["cluster"])
                cluster = load_cluster(decode_file(cluster_path.read_bytes(), cluster_path, display_path(cluster_path)),
                                       display_path(cluster_path))
            else:
                cluster = cluster_from_objects(list(doc.get("objects") or []), file, text)
            self._cluster_warnings(cluster.warnings)
        except FumaroleError as err:
            self.diags += err.diagnostics
        except OSError as exc:
            self.diags.append(file_errors.scenario_cluster_unreadable(file, Span(*position(doc, "cluster")),
                                                                      doc["cluster"], exc.strerror))

    def _process_inputs(self, doc: dict, path: Path, file: str) -> None:
        """A scenario's schedulerOptions and processState, against its bundle's plugins (when it loads)."""
        if "bundle" in doc:
            try:
                bundle = load_bundle(path.parent / str(doc["bundle"]))
            except (FumaroleError, OSError):
                return  # the bundle's own problems are reported by its check
            base, declared = bundle.scheduler_options, declared_process_states(bundle.plugins)
        else:
            plugins = [m for m in _stdlib().checked if m.module.kind == "plugin"]
            base = DEFAULT_OPTIONS
            declared = {m.module.name: {n: m.states[n] for n in m.process_states} for m in plugins}
        self.diags += read_process_inputs(doc, base, declared, file)[2]

    def _cluster(self, path: Path) -> None:
        file = display_path(path)
        try:
            self._cluster_warnings(load_cluster(self.sources[file], file).warnings)
        except FumaroleError as err:
            self.diags += err.diagnostics

    def _cluster_warnings(self, warnings: Sequence[Diagnostic]) -> None:
        """A cluster's warnings, but a Queue spec field a checked policy reads is meant, not a stray (K105)."""
        read = tuple(f"queue.spec[{key!r}]" for key in self.spec_fields_read)
        self.diags += [d for d in warnings if not (d.code == "K105" and d.message.endswith(read))]

    def _hooks(self, path: Path) -> None:
        file = display_path(path)
        docs = self._yaml(self.sources[file], file, "B000", many=True)
        if docs is None:
            return
        for doc in docs:
            self.diags += schema_diagnostics(doc, "hooks.schema.json", file, "B001")


def spec_fields_read(module: A.Module) -> set[str]:
    """The Queue spec fields a policy reads by a literal name: ``queue.spec.get("x", ...)``, ``queue.spec["x"]``."""
    out: set[str] = set()
    for node in preorder(module):
        if isinstance(node, A.Call) and isinstance(node.func, A.Attr) and node.func.name == "get":
            target, key = node.func.obj, node.args[0] if node.args else None
        elif isinstance(node, A.Index):
            target, key = node.obj, node.key
        else:
            continue
        if (isinstance(target, A.Attr) and target.name == "spec" and isinstance(key, A.Literal)
                and isinstance(key.value, str)):
            out.add(key.value)
    return out


def _unparsed(files: list[tuple[str, str]], result: CheckedSources) -> dict[str, set[str]]:
    """Plugins and actions named by files that did not parse (their header, read from the text)."""
    parsed = {c.module.file for c in result.checked}
    out: dict[str, set[str]] = {"plugin": set(), "action": set(), "module": set()}
    for file, text in files:
        header = _HEADER.search(text)
        if file not in parsed and header:
            out[header.group(1)].add(header.group(2))
    return out


def enclosing_bundle(policy: Path) -> Path | None:
    """The bundle folder, above a policy file, whose `sources` include it (so it is checked in context)."""
    for folder in list(policy.parents)[:4]:
        manifest = folder / MANIFEST
        if not manifest.is_file():
            continue
        try:
            doc = load(read_text(manifest))
        except (FumaroleError, YamlError):
            return None
        patterns = doc.get("sources") if isinstance(doc, dict) else None
        if isinstance(patterns, list) and any(
                isinstance(p, str) and policy in {m.resolve() for m in folder.glob(p)} for p in patterns):
            return folder
        return None
    return None


def duplicate_plugins(config: SchedulerConfig) -> list[Diagnostic]:
    """C030 (strict): a plugin listed twice in the tiers runs its hooks twice."""
    out: list[Diagnostic] = []
    first: dict[str, int] = {}
    for number, tier in enumerate(config.tiers, 1):
        for entry in tier:
            if entry.name in first:
                out.append(config_errors.plugin_listed_twice(config.file, Span(*entry.pos), entry.name,
                                                             first[entry.name]))
            else:
                first[entry.name] = number
    return out

"""The catalogue of stable diagnostic codes: what each one means, and which are strict-only.

Codes never change meaning once published: CI configurations, SARIF baselines
and editor settings refer to them.  ``docs/diagnostics.md`` explains each one
with an example, and ``tests/test_check.py`` keeps that page, this catalogue
and the codes the sources emit in step.

The letter names the layer that found the problem: P syntax, E/W the checker
(errors / warnings), C scheduler configuration, B bundle manifest, K cluster
objects, O the scheduler binary's options, S scenarios and the service, F files and arguments, A bundle
archives and signatures, R a policy failing while it runs, T what-if traces and sweeps.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    title: str
    strict: bool = False  # reported by `fumarole check` only with --strict


_CODES = (
    Code("P001", "syntax error"),
    Code("P002", "inconsistent indentation"),
    Code("P003", "bad escape in a string"),
    Code("P004", "number literal out of range"),
    Code("P005", "nested too deeply"),
    Code("P006", "reserved name"),
    Code("P007", "file or line too long"),
    Code("E100", "unknown name"),
    Code("E101", "unknown attribute"),
    Code("E102", "unknown method"),
    Code("E103", "unknown or malformed type"),
    Code("E104", "unknown hook, or a hook where the file kind allows none"),
    Code("E105", "not callable"),
    Code("E110", "type mismatch"),
    Code("E111", "wrong number of arguments"),
    Code("E112", "unknown keyword argument"),
    Code("E113", "optional value used without a check for none"),
    Code("E120", "statement not allowed here"),
    Code("E121", "hook signature mismatch"),
    Code("E122", "missing return"),
    Code("E123", "wrong kind of return"),
    Code("E124", "a bound reads more than its plugin declares"),
    Code("E130", "name defined twice"),
    Code("E131", "cannot assign"),
    Code("E132", "recursion"),
    Code("E133", "guarded let"),
    Code("E134", "constant used before it is evaluated"),
    Code("E140", "bad argument declaration"),
    Code("E141", "unknown enumeration value"),
    Code("E142", "malformed time literal"),
    Code("E150", "unknown module"),
    Code("E151", "modules using each other"),
    Code("E160", "ambiguous name in a victim rule"),
    Code("E161", "victim rule out of place"),
    Code("W200", "unused argument", strict=True),
    Code("W201", "unused definition", strict=True),
    Code("W202", "shadowed name", strict=True),
    Code("W204", "expression value not used"),
    Code("W210", "rule that can never match", strict=True),
    Code("W220", "a victim rule's none check turned around by `not`", strict=True),
    Code("W230", "node rule without a batch form (runs node by node in the fast engine)", strict=True),
    Code("C000", "malformed configuration YAML"),
    Code("C001", "configuration is not a mapping"),
    Code("C002", "unknown configuration key"),
    Code("C003", "malformed configuration entry"),
    Code("C004", "unknown plugin switch"),
    Code("C005", "switch is not a boolean"),
    Code("C010", "unknown argument"),
    Code("C011", "missing required argument"),
    Code("C012", "argument of the wrong type"),
    Code("C020", "unknown action"),
    Code("C021", "unknown plugin"),
    Code("C022", "configuration Volcano rejects"),
    Code("C030", "plugin listed twice in the tiers", strict=True),
    Code("C031", "a site plugin's victims answer is combined by Volcano's tiered intersect (not a veto)"),
    Code("C032", "intersect-all also intersects Volcano's later tiers (not a veto)"),
    Code("C033", "an evicting action never asks the hook a site rule is stated in"),
    Code("B000", "malformed bundle manifest YAML"),
    Code("B001", "bundle manifest or hook catalogue violates its JSON Schema"),
    Code("B002", "source pattern matches no file"),
    Code("B010", "hook override for an unknown session function"),
    Code("B011", "unknown combinator"),
    Code("B012", "combinator cannot combine this kind of hook"),
    Code("B013", "a veto plugin that is not listed in the tiers"),
    # K000 is retired (the service's catch-all for objects the readers now refuse each with a K code); never reuse it
    Code("K001", "malformed cluster YAML"),
    Code("K002", "unknown or missing object kind"),
    Code("K003", "bad resource quantity"),
    Code("K004", "malformed object field"),
    Code("K005", "not a Kubernetes object"),
    Code("K006", "duplicate object"),
    Code("K007", "a field of the wrong type"),
    Code("K008", "empty cluster input"),
    Code("K101", "PodGroup names a queue that does not exist"),
    Code("K102", "Pod names a PodGroup that does not exist"),
    Code("K103", "unknown field of a Kubernetes object"),
    Code("K104", "HyperNode names a node that does not exist"),
    Code("K105", "Queue spec field outside Volcano's Queue API"),
    Code("K106", "Numatopology names a node that does not exist"),
    Code("K107", "sharding names a NodeShard that does not exist"),
    Code("K110", "invalid queue hierarchy"),
    Code("K111", "HyperNode claimed by two parents"),
    Code("K112", "HyperNode member names no HyperNode"),
    Code("K113", "HyperNode cycle"),
    Code("O001", "unknown scheduler option"),
    Code("O002", "scheduler option of the wrong type or form"),
    Code("O003", "Volcano scheduler option fumarole does not model"),
    Code("S001", "malformed scenario YAML"),
    Code("S002", "malformed scenario"),
    Code("S003", "cannot read the last-known-good bundle"),
    Code("S004", "cannot use the state folder"),
    Code("S005", "cannot persist the bundle"),
    Code("S006", "unknown key in a scenario"),
    Code("S010", "nothing to roll back to"),
    Code("S020", "no valid bundle to serve"),
    Code("S030", "malformed processState"),
    Code("F001", "cannot read a file"),
    Code("F002", "bad command-line argument"),
    Code("F003", "not a fumarole input"),
    Code("F004", "internal error"),
    Code("F005", "cannot read a live cluster"),
    Code("F006", "an optional part is not installed"),
    Code("A001", "archive over a size limit"),
    Code("A002", "not a gzip or tar archive"),
    Code("A004", "unsafe archive member"),
    Code("A005", "archive member is not a regular file"),
    Code("A006", "archive member appears twice"),
    Code("A007", "malformed archive manifest"),
    Code("A008", "archive and manifest list different files"),
    Code("A009", "archive file does not match its digest"),
    Code("A010", "bundle digest does not match the file list"),
    Code("A011", "archive member is both a file and a folder"),
    Code("A020", "no bundle.yaml"),
    Code("A021", "symlinked folder in a bundle"),
    Code("A022", "source pattern leaves the bundle folder"),
    Code("A030", "unreadable or wrong signing key"),
    Code("A031", "unsigned bundle where a signature is required"),
    Code("A032", "malformed signature"),
    Code("A033", "signature does not verify"),
    Code("R001", "policy failed while running"),
    Code("T001", "malformed trace YAML"),
    Code("T002", "malformed trace"),
    Code("T003", "bad duration or time in a trace"),
    Code("T004", "malformed sweep file"),
)

CODES: dict[str, Code] = {c.code: c for c in _CODES}
STRICT_ONLY: frozenset[str] = frozenset(c.code for c in _CODES if c.strict)
# Warnings that `fumarole check --strict` reports as errors: each means fumarole (and Volcano) set
# aside something written -- an unknown field, an ignored argument, a value replaced by its default.
ERRORS_WHEN_STRICT: frozenset[str] = frozenset({"K103", "C033", "C010", "C012"})


def title(code: str) -> str:
    """The short name of a code (SARIF rule names, JUnit types); unknown codes get a generic one."""
    known = CODES.get(code)
    return known.title if known else "diagnostic"

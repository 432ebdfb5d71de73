"""The diagnostics about files, command-line arguments, internal errors, live clusters and
optional parts (F codes, docs/diagnostics.md): what stops a command before or around the
language and the runtime.  One constructor per problem (as ``declaration_errors.py``): the
message and hint are written here once, and the callers pass facts -- the file, the path, the
reason the operating system or a library gave.

Every stage reports some of them, the formatter in this package included, so they live at the
bottom of the layering, beside the codes catalogue (``codes.py``): any module may import them.
"""

from __future__ import annotations

from pathlib import Path

from .diagnostics import NO_POSITION, Diagnostic, Span

# The file named by diagnostics about the command itself (an argument, an install).
COMMAND = "fumarole"

_REPORT_IT = "please report it; FUMAROLE_DEBUG=1 shows details"

_INPUT_KINDS = ("fumarole checks *.policy files, bundle folders (bundle.yaml), volcano-scheduler.conf files, "
                "scenario files (with `expect`) and cluster dumps (Kubernetes objects)")


# -- F001 a file that cannot be read ------------------------------------------------------------

def unreadable(path: Path | str, reason: str | None, file: str, at: Span = NO_POSITION) -> Diagnostic:
    """``reason``: the operating system's words (``strerror``, which may be missing), or where the
    text stops being UTF-8."""
    return Diagnostic("F001", f"cannot read {path}: {reason}", file, at)


def no_such_bundle(file: str, at: Span, bundle: Path) -> Diagnostic:
    """A scenario's ``bundle`` names nothing that exists."""
    return Diagnostic("F001", f"cannot read bundle {bundle}: no such bundle", file, at)


def scenario_cluster_unreadable(file: str, at: Span, cluster: object, reason: str | None) -> Diagnostic:
    """A scenario's ``cluster`` dump that cannot be read (as the scenario names it)."""
    return Diagnostic("F001", f"cannot read cluster {cluster}: {reason}", file, at)


def trace_cluster_unreadable(file: str, at: Span, cluster: str, reason: str) -> Diagnostic:
    """A trace's ``cluster`` dump that cannot be read (``cluster``: as the trace names it, clipped)."""
    return Diagnostic("F001", f"cannot read the trace's cluster {cluster}: {reason}", file, at)


def no_bundle_or_configuration(path: Path) -> Diagnostic:
    return Diagnostic("F001", f"no such bundle or configuration: {path}", str(path), NO_POSITION)


# -- F002 a bad command-line argument -----------------------------------------------------------

def no_such_path(path: Path | str) -> Diagnostic:
    return Diagnostic("F002", f"no such file or folder: {path}", str(path), NO_POSITION)


def bad_argument(message: str, hint: str | None = None) -> Diagnostic:
    """An argument the command cannot act on, in the words of the option's own check."""
    return Diagnostic("F002", message, COMMAND, NO_POSITION, hint=hint)


def not_positive(option: str) -> Diagnostic:
    return bad_argument(f"{option} must be more than zero")


def below_minimum(option: str, minimum: int) -> Diagnostic:
    return bad_argument(f"{option} must be at least {minimum}")


def bad_distribution(option: str, text: str) -> Diagnostic:
    return bad_argument(f"{option} {text!r}: expected fixed:D, uniform:A,B or exp:MEAN with durations such as 30m")


def bad_command_line(command_line: str, col: int, message: str, hint: str | None) -> Diagnostic:
    """The argument parser's refusal, at its column in the command line as typed (``command_line``
    names that line: it is shown as the source under the message)."""
    return Diagnostic("F002", message, command_line, Span(1, col), hint=hint)


# -- F003 not a fumarole input ------------------------------------------------------------------

def not_an_input(file: str) -> Diagnostic:
    return Diagnostic("F003", "not a policy file, bundle, scheduler configuration, scenario or cluster dump", file,
                      hint=_INPUT_KINDS)


def not_a_policy_file(file: str) -> Diagnostic:
    """``fmt`` given something else than a policy file or a folder of them."""
    return Diagnostic("F003", "fmt formats policy files (*.policy)", file)


# -- F004 an internal error ---------------------------------------------------------------------

def check_crashed(file: str, error: Exception) -> Diagnostic:
    """A check stage raised: the file it was checking is named, the other stages still report."""
    return Diagnostic("F004", f"internal error while checking: {type(error).__name__}: {error}", file,
                      hint=_REPORT_IT)


def compile_crashed(source: str, error: Exception) -> Diagnostic:
    """Compiling an uploaded bundle raised: the bundle is refused, the service keeps serving."""
    return Diagnostic("F004", f"internal error while compiling the bundle: {type(error).__name__}: {error}", source)


def child_crashed(what: str, detail: object) -> Diagnostic:
    """A contained child (``what``: the work it was doing) died of something else than its budget."""
    return Diagnostic("F004", f"internal error in the {what}: {detail}", what)


def format_changes_meaning(file: str) -> Diagnostic:
    """The formatter's output would parse to another tree: the file is left as it is."""
    return Diagnostic("F004", "internal error: formatting would change this file's meaning; left unchanged "
                              "(please report it)", file)


# -- F005 a live cluster that cannot be read ----------------------------------------------------

def cluster_unreachable(kubeconfig: str, reason: str) -> Diagnostic:
    """``reason``: what the kubeconfig loader, the API server or its reply's shape said."""
    return Diagnostic("F005", reason, kubeconfig, NO_POSITION)


# -- F006 an optional part that is not installed ------------------------------------------------

def extra_missing(feature: str, extra: str, module: str) -> Diagnostic:
    return Diagnostic("F006", f"{feature} needs the '{extra}' extra ({module} is not installed)", COMMAND,
                      NO_POSITION, hint=f"pip install 'fumarole[{extra}]'")

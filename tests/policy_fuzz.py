"""Policy-text fuzzing: generated and mutated policies either get a diagnostic or compile and run.

The invariant (docs/language.md, "Safety"; issue 8): whatever the text, fumarole
answers with diagnostics that have a file and a line, or compiles it and runs a
session that ends -- with decisions or with R001 naming the policy line -- in
bounded time; never an internal error, a hang, or code outside the sandbox (a
sentinel file the texts try to create must never appear).

``tests/test_fuzz_policies.py`` runs a few seconds of this under pytest; a
longer run is ``python -m tests.policy_fuzz --examples 5000`` (figures in
docs/language.md).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fumarole.policy_lang.diagnostics import FumaroleError
from fumarole.runtime.bundles.bundle import build_bundle
from fumarole.runtime.bundles.library import compile_sources, standard_library
from fumarole.runtime.framework.budget import StepBudget
from fumarole.runtime.framework.namespace import PolicyRuntimeError
from fumarole.runtime.framework.lifecycle import new_session, run_session
from fumarole.runtime.ingest.kube import Cluster, load_cluster
from fumarole.runtime.ingest.scheduler_config import config_from_document

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "policies/volcano").rglob("*.policy"))
SENTINEL = Path(tempfile.gettempdir()) / "fumarole-fuzz-sentinel"
TIME_LIMIT = 20.0  # seconds one input may take, end to end, before it counts as a hang

CONFIG = {"actions": "enqueue, allocate, backfill, preempt, reclaim",
          "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                    {"plugins": [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"},
                                 {"name": "proportion"}, {"name": "nodeorder"}, {"name": "binpack"}]}]}
ALONE = {"actions": "enqueue", "tiers": [{"plugins": [{"name": "fuzz"}]}]}

# Texts a mutation splices in: the inputs of issue 8 and the pieces that break naive code generators.
SPLICES = ["{2}", "{0}", "\"{1}\"", "\"\\x\"", "\"\\N{NOPE}\"", "\"\\u12\"", "\"\\ud800\"", "\"zone-é\"",
           "9" * 4400, "1e400", "- " * 300 + "1", "not " * 260 + "true", " + ".join(["1"] * 400),
           "__class__", "__globals__", "_k8s", "_rt", "__builtins__", "(", ")", "[", "]", ":", ",", ".",
           "\n", "\n    ", "    ", "while true:\n        pass\n", "range(2000000000)", "x * x", "\"%s\"",
           f"\"+__import__('os').system('touch {SENTINEL}')+\"", "fn(x: int) => x", "none", "0", "-1",
           "\"a\" + \"b\"", "let", "return", "for", "in", "if", "else", "when", "drain", "victim", "fail"]


@dataclass
class Outcome:
    kind: str  # diagnostic / ran / runtime-error / FAILURE
    detail: str
    seconds: float


@lru_cache(maxsize=1)
def _cluster() -> Cluster:
    return load_cluster((ROOT / "examples/cluster.yaml").read_text(), "cluster.yaml")


def outcome(file: str, text: str) -> Outcome:
    """What fumarole does with one policy file in place of the standard library's file of that name."""
    started = time.monotonic()
    try:
        kind, detail = _outcome(file, text)
    except Exception as exc:  # noqa: BLE001 - the finding: an internal error
        kind, detail = "FAILURE", f"{type(exc).__name__}: {exc}"
    seconds = time.monotonic() - started
    if kind != "FAILURE" and seconds > TIME_LIMIT:
        kind, detail = "FAILURE", f"took {seconds:.1f} s"
    if SENTINEL.exists():
        SENTINEL.unlink()
        kind, detail = "FAILURE", "escaped the sandbox: the sentinel file was created"
    return Outcome(kind, detail, seconds)


def _outcome(file: str, text: str) -> tuple[str, str]:
    try:
        library = compile_sources([(file, text)], base=standard_library())
    except FumaroleError as err:
        bad = [d for d in err.diagnostics if not d.file or (d.severity == "error" and d.span.line < 1)]
        if bad or not err.diagnostics:
            return "FAILURE", f"a diagnostic without a position: {bad[0].headline() if bad else 'none at all'}"
        return "diagnostic", err.diagnostics[0].headline()
    # a generated plugin alone (its `on open` is all it has); a mutated shipped file with all of Volcano
    config = config_from_document(ALONE if "fuzz" in library.plugins else CONFIG, "fuzz.yaml")
    try:
        bundle = build_bundle(config, library)
    except FumaroleError as err:  # e.g. a mutated plugin that now requires an argument
        return "diagnostic", err.diagnostics[0].headline()
    budget = StepBudget(session_steps=5_000_000, hook_steps=500_000, timeout=TIME_LIMIT / 2)
    try:
        run_session(new_session(bundle, _cluster(), now=0.0, budget=budget))
    except PolicyRuntimeError as exc:
        if not exc.file or exc.line < 1:
            return "FAILURE", f"R001 without a position: {exc.message}"
        return "runtime-error", f"{exc.file}:{exc.line}: {exc.message}"
    except FumaroleError as err:
        return "diagnostic", err.diagnostics[0].headline()
    return "ran", ""


# -- mutation of the shipped policies ----------------------------------------------------------

def mutate(text: str, rng: random.Random, steps: int = 3) -> str:
    """A few random edits: splice a hostile text, delete, duplicate or swap lines, cut characters."""
    for _ in range(steps):
        lines = text.split("\n")
        choice = rng.randrange(6)
        at = rng.randrange(len(lines))
        if choice == 0 and text:  # splice a hostile text at a random place
            pos = rng.randrange(len(text))
            text = text[:pos] + rng.choice(SPLICES) + text[pos:]
        elif choice == 1:
            del lines[at]
            text = "\n".join(lines)
        elif choice == 2:
            lines.insert(at, lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
        elif choice == 3:
            other = rng.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
            text = "\n".join(lines)
        elif choice == 4 and text:  # replace a token-sized piece
            pos = rng.randrange(len(text))
            text = text[:pos] + rng.choice(SPLICES) + text[pos + rng.randrange(1, 8):]
        else:  # cut a few characters
            pos = rng.randrange(max(len(text), 1))
            text = text[:pos] + text[pos + rng.randrange(1, 4):]
    return text


def mutated_shipped(rng: random.Random) -> tuple[str, str]:
    path = rng.choice(SHIPPED)
    return str(path.relative_to(ROOT)), mutate(path.read_text(), rng, rng.randrange(1, 5))


# -- grammar-driven generation --------------------------------------------------------------------

STRINGS = ['"a"', '""', '"zone-é"', '"{0}"', '"{2}{1}"', '"%s"', '"\\n"', '"\\x41"', '"\\u00e9"', '"\\N{BULLET}"',
           f'"\\")+__import__(\'os\').system(\'touch {SENTINEL}\')+(\\""']
INTS = ["0", "1", "2", "-3", "7", "100", "9223372036854775807"]
BAD_LITERALS = ['"\\x"', '"\\q"', '"\\ud800"', "9223372036854775808", "9" * 30, "1e400"]  # each a diagnostic


class _Generator:
    """Random policy text following the grammar, typed enough that a good share checks."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.ints, self.bools, self.strs, self.lists = ["n"], ["b"], ["s"], ["l"]
        self.temp = 0

    def pick(self, options):
        return self.rng.choice(options)

    def leaf(self, options):
        """A literal or a variable; now and then a literal that is a diagnostic."""
        return self.pick(BAD_LITERALS) if self.rng.random() < 0.02 else self.pick(options)

    def int_expr(self, depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.3:
            return self.leaf(INTS + self.ints)
        d = depth - 1
        return self.pick([
            lambda: f"{self.int_expr(d)} {self.pick(['+', '-', '*', '%'])} {self.int_expr(d)}",
            lambda: f"-{self.int_expr(d)}", lambda: f"({self.int_expr(d)})", lambda: f"len({self.list_expr(d)})",
            lambda: f"{self.int_expr(d)} if {self.bool_expr(d)} else {self.int_expr(d)}",
            lambda: f"floor({self.int_expr(d)} / {self.int_expr(d)})", lambda: f"int({self.int_expr(d)} * 1.5)",
            lambda: f"max({self.int_expr(d)}, {self.int_expr(d)})", lambda: f"sum({self.list_expr(d)})",
        ])()

    def bool_expr(self, depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.3:
            return self.pick(["true", "false"] + self.bools)
        d = depth - 1
        return self.pick([
            lambda: f"{self.int_expr(d)} {self.pick(['<', '<=', '==', '!=', '>', '>='])} {self.int_expr(d)}",
            lambda: f"not {self.bool_expr(d)}", lambda: f"{self.bool_expr(d)} {self.pick(['and', 'or'])} "
                                                         f"{self.bool_expr(d)}",
            lambda: f"{self.str_expr(d)} in {self.str_expr(d)}", lambda: f"{self.int_expr(d)} in {self.list_expr(d)}",
        ])()

    def str_expr(self, depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.3:
            return self.leaf(STRINGS + self.strs)
        d = depth - 1
        return self.pick([lambda: f"{self.str_expr(d)} + {self.str_expr(d)}", lambda: f"str({self.int_expr(d)})",
                          lambda: f"trim_space({self.str_expr(d)})"])()

    def list_expr(self, depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.3:
            return self.pick(["[1, 2, 3]", "range(5)"] + self.lists)
        d = depth - 1
        return self.pick([
            lambda: f"range({self.int_expr(d)})", lambda: f"{self.list_expr(d)} + {self.list_expr(d)}",
            lambda: f"[{self.int_expr(d)} for x in {self.list_expr(d)} if {self.bool_expr(d)}]",
            lambda: f"[{', '.join(self.int_expr(d) for _ in range(self.rng.randrange(4)))}]",
        ])()

    def block(self, indent: int, depth: int, in_loop: bool) -> list[str]:
        pad = "    " * indent
        out: list[str] = []
        for _ in range(self.rng.randrange(1, 5)):
            kind = self.rng.randrange(12 if depth > 0 else 7)
            d = depth - 1
            if kind == 0:
                self.temp += 1
                name = f"t{self.temp}"
                kind_of = self.rng.randrange(3)
                value = [self.int_expr, self.bool_expr, self.str_expr][kind_of](2)
                out.append(f"{pad}let {name} = {value}")
                [self.ints, self.bools, self.strs][kind_of].append(name)
            elif kind <= 6:  # a simple statement on the state variables
                out.append(pad + self.pick([
                    lambda: f"n = {self.int_expr(3)}", lambda: f"n {self.pick(['+=', '-=', '*='])} {self.int_expr(2)}",
                    lambda: f"s = {self.str_expr(3)}", lambda: f"l.append({self.int_expr(2)})",
                    lambda: f"b = {self.bool_expr(3)}",
                    lambda: f"{self.pick(['break', 'continue']) if in_loop else 'pass'} when {self.bool_expr(2)}",
                ])())
            elif kind in (7, 8):
                out.append(f"{pad}if {self.bool_expr(2)}:")
                out += self.block(indent + 1, d, in_loop)
                if self.rng.random() < 0.5:
                    out.append(f"{pad}else:")
                    out += self.block(indent + 1, d, in_loop)
            elif kind == 9:
                out.append(f"{pad}for i in {self.list_expr(2)}:")
                out += self.block(indent + 1, d, True)
            else:
                out.append(f"{pad}while {self.bool_expr(2)}:")
                out += self.block(indent + 1, d, True)
        return out

    def policy(self) -> str:
        body = self.block(1, 3, False)
        return ("plugin fuzz\n\nstate n: int\nstate b: bool\nstate s: string\nstate l: list[int]\n\n"
                "on open:\n" + "\n".join(body) + "\n")


def generated_policy(rng: random.Random) -> tuple[str, str]:
    return "fuzz.policy", _Generator(rng).policy()


# -- the long run ---------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000,
                        help="mutated shipped policies to try, and as many generated ones (default 1000)")
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    counts: dict[str, int] = {}
    failures: list[tuple[str, str, Outcome]] = []
    started = time.monotonic()
    inputs = [mutated_shipped(rng) for _ in range(args.examples)] + [generated_policy(rng) for _ in range(args.examples)]
    slowest = 0.0
    for file, text in inputs:
        result = outcome(file, text)
        counts[result.kind] = counts.get(result.kind, 0) + 1
        slowest = max(slowest, result.seconds)
        if result.kind == "FAILURE":
            failures.append((file, text, result))
    print(f"{len(inputs)} inputs in {time.monotonic() - started:.0f} s (slowest {slowest:.1f} s): "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for file, text, result in failures[:10]:
        print(f"--- {file}: {result.detail}\n{text[:2000]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

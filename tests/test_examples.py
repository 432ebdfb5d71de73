"""The site bundles under examples/: every scenario passes with its bundle, and fails
under Volcano's own configuration, which proves each site policy changes the decision.

Volcano's configuration is the bundle's own wiring without its site plugins and
without its `hooks` overrides, built on the standard library alone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fumarole.runtime.authoring.scenario import load_scenario, run_file, run_scenario
from fumarole.runtime.bundles.bundle import Bundle, build_bundle, default_bundle, load_bundle
from fumarole.runtime.bundles.library import standard_library
from fumarole.runtime.ingest.yamlpos import load

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BUNDLES = sorted(p.parent for p in EXAMPLES.glob("*/bundle.yaml"))
CASES = [(folder, case) for folder in BUNDLES for case in sorted((folder / "tests").glob("*.yaml"))]
IDS = [f"{folder.name}/{case.stem}" for folder, case in CASES]


def volcano_without_site_plugins(folder: Path, keep_hooks: bool = False) -> Bundle:
    """The bundle's configuration minus the plugins it adds and (unless `keep_hooks`) its `hooks` overrides."""
    bundle = load_bundle(folder)
    stdlib = standard_library()
    site = {name for name in bundle.plugins if name not in stdlib.plugins}
    assert site, f"{folder.name} adds no plugin of its own"
    tiers = tuple(t for t in (tuple(e for e in tier if e.name not in site) for tier in bundle.config.tiers) if t)
    hooks = load((folder / "bundle.yaml").read_text()).get("hooks") if keep_hooks else None
    return build_bundle(replace(bundle.config, tiers=tiers), stdlib, hook_overrides=hooks or {})


def test_the_site_bundles_are_there():
    names = {folder.name for folder in BUNDLES}
    assert {"site-min-runtime", "site-protected-queues", "site-most-overused-first",
            "site-eviction-budget", "site-priority-guard", "site-shortest-run-first", "site-department-boundary",
            "site-no-ping-pong", "site-non-preemptable-queue", "site-last-checkpoint-first",
            "site-eviction-patience", "site-node-weight", "site-gpu-model"} <= names


SITE_BUNDLES = [f for f in BUNDLES if f.name.startswith("site-")]


@pytest.mark.parametrize("folder", SITE_BUNDLES, ids=[f.name for f in SITE_BUNDLES])
def test_every_site_bundle_has_scenarios(folder: Path):
    assert list((folder / "tests").glob("*.yaml")), f"{folder.name} has no scenario under tests/"


@pytest.mark.parametrize(("folder", "case"), CASES, ids=IDS)
def test_scenario_passes_with_its_bundle(folder: Path, case: Path):
    outcome = run_file(case)
    assert outcome.passed, outcome.difference


@pytest.mark.parametrize(("folder", "case"), CASES, ids=IDS)
def test_scenario_fails_under_volcano(folder: Path, case: Path):
    scenario = load_scenario(case)
    assert scenario.bundle.digest == load_bundle(folder).digest, "the scenario must run the bundle of its folder"
    scenario.bundle = volcano_without_site_plugins(folder)
    assert scenario.bundle.dispatch == default_bundle().dispatch
    outcome = run_scenario(scenario)
    assert not outcome.passed, f"{case.name}: Volcano's own configuration decides the same; the site policy changes nothing"


# Stricter: the site plugin itself, not only the bundle's `hooks` combinator,
# changes the decision.
@pytest.mark.parametrize(("folder", "case"), CASES, ids=IDS)
def test_scenario_fails_without_the_site_plugin(folder: Path, case: Path):
    scenario = load_scenario(case)
    scenario.bundle = volcano_without_site_plugins(folder, keep_hooks=True)
    outcome = run_scenario(scenario)
    assert not outcome.passed, f"{case.name}: the bundle's hooks alone decide the same; its site plugin changes nothing"

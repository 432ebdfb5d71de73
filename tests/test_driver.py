"""The language driver's stages: modules resolved in dependency order wherever they come from."""

from __future__ import annotations

from pathlib import Path

from fumarole.policy_lang.driver import STAGES, check_files, module_order
from fumarole.policy_lang.parser import parse
from fumarole.runtime.bundles.environment import load_environment
from fumarole.runtime.bundles.library import check_sources, compile_sources
from fumarole.runtime.lsp import knowledge

USER = "module a_user\n\nuse z_base\n\ndef first_task() -> Task? = newest()\n\nlet HOLDER = first_task()\n"
BASE = "module z_base\n\ndef newest() -> Task? = none\n"
PLUGIN = "plugin p\n\nuse a_user\n\non allocate(task):\n    let t = HOLDER\n    return when t == none\n    let n = t.\n"


def test_the_stages_are_named_in_order():
    assert STAGES == ("parse", "expand sugar", "resolve modules", "check", "compile", "batch forms")


def test_a_module_using_a_module_given_after_it_checks():
    """Files are checked in dependency order, not the order given: a user listed before the
    module it uses was E150 'unknown module'."""
    files = [("a.policy", USER.replace("\nlet HOLDER = first_task()\n", "")), ("z.policy", BASE)]
    result = check_files(load_environment(), files)
    assert [d for d in result.diagnostics if d.severity == "error"] == []
    assert [c.module.name for c in result.checked] == ["z_base", "a_user"]
    plugin = "plugin p\n\nuse a_user\n\non job_ready(job) = first_task() == none\n"
    library = compile_sources([("p.policy", plugin), *files])
    assert set(library.plugins) == {"p"} and set(library.modules) == {"a_user", "z_base"}


def test_modules_using_each_other_are_e151_at_each_use():
    files = [("a.policy", "module a\n\nuse b\n\ndef f() -> int = 1\n"),
             ("b.policy", "module b\n\nuse c\n\ndef g() -> int = 1\n"),
             ("c.policy", "module c\n\nuse a\n\ndef h() -> int = 1\n")]
    result = check_sources(files)
    cycle = [(d.code, d.file, d.span.line, d.span.col, d.message) for d in result.diagnostics if d.code == "E151"]
    assert cycle == [
        ("E151", "a.policy", 3, 1, "modules cannot use each other: 'a' uses 'b', which uses 'a' through c"),
        ("E151", "b.policy", 3, 1, "modules cannot use each other: 'b' uses 'c', which uses 'b' through a"),
        ("E151", "c.policy", 3, 1, "modules cannot use each other: 'c' uses 'a', which uses 'c' through b"),
    ]
    [(code, message)] = [(d.code, d.message) for d in check_sources([("s.policy", "module s\n\nuse s\n")]).diagnostics
                         if d.severity == "error"]
    assert (code, message) == ("E151", "module 's' uses itself")


def test_module_order_keeps_the_given_order_where_nothing_is_used():
    modules = [parse(f"module m{i}\n", f"m{i}.policy") for i in range(5)]
    ordered, problems = module_order(modules)
    assert ordered == modules and problems == []
    chain = [parse(f"module m{i}\n\nuse m{i + 1}\n", f"m{i}.policy") for i in range(3000)] + \
        [parse("module m3000\n", "end.policy")]
    ordered, problems = module_order(chain)  # deep chains: no recursion
    assert [m.name for m in ordered] == [f"m{i}" for i in range(3000, -1, -1)] and problems == []


def test_the_language_server_checks_a_used_module_over_the_modules_it_uses(tmp_path):
    """Completion after `t.` where t comes from a module whose constant is typed by another module
    of the bundle: the server checked each module over no modules, so the type was unknown."""
    (tmp_path / "bundle.yaml").write_text("apiVersion: fumarole/v1\nkind: PolicyBundle\n")
    (tmp_path / "a_user.policy").write_text(USER)
    (tmp_path / "z_base.policy").write_text(BASE)
    items = knowledge.complete_policy(PLUGIN, tmp_path / "p.policy", 7, 14)
    labels = {i.label for i in items}
    assert {"priority", "status", "job"} <= labels


def test_batch_forms_are_their_own_stage_after_compiling():
    """The compiler lowers a file to its builder and no further; the driver's batch-form stage adds
    the fast engine's forms (a probed compile, running node by node, gets none)."""
    from fumarole.policy_lang.compiler import lower_module
    from fumarole.policy_lang.driver import compile_checked

    from tests.helpers import checked

    plugin = checked("plugin p\n\non node_order(task, node) = node.idle.cpu\n")
    assert "_BatchForm(_bh_node_order)" not in lower_module(plugin).assemble([]).source
    assert "_rt.batch_forms.add(_hook_node_order, _BatchForm(_bh_node_order))" in compile_checked(plugin).source
    assert "_BatchForm" not in compile_checked(plugin, lambda file, expr, owner: 0).source

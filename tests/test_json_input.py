"""JSON clusters load through the C JSON parser, and still report problems at their line and column."""

from __future__ import annotations

import json

import yaml


def test_a_json_cluster_decides_like_its_yaml(cli, tmp_path, root):
    objects = list(yaml.safe_load_all((root / "examples" / "cluster.yaml").read_text()))
    objects = [o for o in objects if o]
    as_json = tmp_path / "cluster.json"
    as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=1))
    from_json = cli("run", str(as_json), "-o", "json")
    from_yaml = cli("run", str(root / "examples" / "cluster.yaml"), "-o", "json")
    assert from_json.code == 0 and from_json.out == from_yaml.out


def test_a_bad_quantity_in_json_is_reported_at_its_place(cli, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [\n'
                    ' {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},\n'
                    '  "status": {"allocatable": {"cpu": "lots"}}}]}\n')
    result = cli("run", str(path))
    assert result.code == 2
    assert result.err.startswith(f"{path}:3:37: error[K003]: bad quantity in Node n1.status.allocatable.cpu")


def test_an_unknown_field_in_json_is_warned_at_its_place(cli, tmp_path):
    path = tmp_path / "warn.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [\n'
                    ' {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labelz": {}},\n'
                    '  "status": {"allocatable": {"cpu": "4"}}}]}\n')
    result = cli("run", str(path), "-o", "json")
    assert result.code == 0
    assert f"{path}:2:66: warning[K103]: unknown field 'metadata.labelz' in Node n1" in result.err


def test_json_that_yaml_reads_differently_takes_the_yaml_path(cli, tmp_path):
    """YAML 1.1 reads 1e3 as text: the JSON shortcut must not turn it into a number."""
    path = tmp_path / "float.json"
    path.write_text('{"apiVersion": "v1", "kind": "List", "items": [\n'
                    ' {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},\n'
                    '  "status": {"allocatable": {"cpu": 1e3}}}]}\n')
    via_yaml = cli("run", str(path), "-o", "json")
    path.write_text(path.read_text().replace("1e3", '"1e3"'))
    quoted = cli("run", str(path), "-o", "json")
    assert (via_yaml.code, via_yaml.out) == (quoted.code, quoted.out)

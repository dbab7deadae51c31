"""The ground-truth zoo (issue 30): built small and checked, a tampered model caught, the
circuit's facts (which head and coordinates compute which definition) verified against the
weights by ablation, seeded random programs of exact depths, refusals with exit status 2."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from safetensors.numpy import load_file, save_file

import crasp
from crasp.cli import cli
from crasp.compiler import load_model
from crasp.zoo.ablation import ablate_nodes, cut_edge, decisions, score
from crasp.zoo.random_programs import random_program
from crasp.zoo.strings import check_strings


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    place = tmp_path_factory.mktemp("zoo") / "zoo"
    result = CliRunner().invoke(cli, ["zoo", "build", "-o", str(place), "--programs", "dyck*",
                                      "--random", "3", "--depths", "1:3", "--seed", "7"])
    assert result.exit_code == 0, result.output
    return place


def test_build_writes_every_model_and_the_index(zoo):
    summary = json.loads((zoo / "zoo.json").read_text())
    assert summary["models"] == ["dyck1", "dyck2_bounded", "random_d1_000", "random_d2_001",
                                 "random_d3_002"]
    for name in summary["models"]:
        place = zoo / "models" / name
        assert {p.name for p in place.iterdir()} == {"config.json", "model.safetensors",
                                                     "program.crasp", "meta.json"}
        meta = json.loads((place / "meta.json").read_text())
        assert meta["depth"] == load_model(place).config["depth"]
        assert {d["name"] for d in meta["circuit"]["definitions"]} == {
            d.name for d in crasp.parse_program((place / "program.crasp").read_text()).definitions}
    csv_rows = (zoo / "index.csv").read_text().splitlines()
    assert csv_rows[0].startswith("name,source,family,depth") and len(csv_rows) == 6
    assert "| dyck2_bounded | reference | Dyck | 2 |" in (zoo / "index.md").read_text()
    assert [json.loads((zoo / "models" / n / "meta.json").read_text())["depth"]
            for n in summary["models"][2:]] == [1, 2, 3]


def test_check_passes_and_catches_a_tampered_model(zoo, tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["zoo", "check", str(zoo)])
    assert result.exit_code == 0, result.output
    assert "all 5 models agree with their programs" in result.output
    import shutil
    copy = tmp_path / "copy"
    shutil.copytree(zoo, copy)
    weights = copy / "models" / "dyck1" / "model.safetensors"
    tensors = load_file(str(weights))
    tensors["layers.0.attn.v"] = tensors["layers.0.attn.v"] * 0
    save_file(tensors, str(weights), metadata={"format": "crasp-transformer", "version": "2"})
    (copy / "models" / "dyck2_bounded" / "program.crasp").write_text(
        'alphabet "(" ")"\nx = #"(" > 0\n')
    result = runner.invoke(cli, ["zoo", "check", str(copy)])
    assert result.exit_code == 2
    assert "dyck1: tensor 'layers.0.attn.v' is not what program.crasp compiles to" in result.output
    assert "dyck2_bounded: meta.json's program_sha256 is not the hash" in result.output
    assert "2 of 5 models failed the check" in result.output


def test_the_circuit_names_the_weights_that_compute_each_definition(zoo):
    """Ablating a definition's nodes changes exactly the decisions that read it, and the full
    circuit is faithful; each test sits in the head dimension the circuit names."""
    place = zoo / "models" / "dyck2_bounded"
    meta = json.loads((place / "meta.json").read_text())
    circuit, model = meta["circuit"], load_model(place)
    strings = check_strings(meta["vocab"], 6, 64, 2, 30)
    reference = decisions(model, strings)
    every = {int(i) for i in circuit["nodes"]}
    assert score(model, {**circuit, "edges": []}, every, strings)["faithfulness"] == 1.0
    for definition in circuit["definitions"]:
        ablated = decisions(ablate_nodes(model, circuit, set(definition["nodes"])), strings)
        assert (ablated != reference).any(), definition["name"]
    for ident, node in circuit["nodes"].items():
        if node["kind"] == "test":
            value_row = model.tensors[f"layers.{node['layer'] - 1}.attn.v"][node["head_dim"]]
            reads = {c for body in node["counts"] if body["coefficient"]
                     for c in circuit["nodes"][str(body["node"])].get("residual", [])}
            assert reads <= set(np.flatnonzero(value_row)), ident
            assert model.tensors[f"layers.{node['layer'] - 1}.attn.o"][node["slot"],
                                                                        node["head_dim"]] == 1
    answer = circuit["answer_node"]
    effects = [(decisions(cut_edge(model, circuit, e["from"], answer), strings) != reference
                ).any() for e in circuit["edges"] if e["to"] == answer]
    assert effects and any(effects)


def test_score_command_reports_faithfulness_and_edges(zoo):
    result = CliRunner().invoke(cli, ["zoo", "score", str(zoo), "dyck1"])
    assert result.exit_code == 0, result.output
    assert "faithfulness (decisions kept with everything outside ablated): 1.0000" in \
        result.output
    assert "necessary edges (cutting one changes a decision): 8 of 11" in result.output
    dropped = CliRunner().invoke(cli, ["zoo", "score", str(zoo), "dyck1", "--drop", "2",
                                       "--no-edges"])
    assert dropped.exit_code == 0 and "faithfulness" in dropped.output
    assert "1.0000" not in dropped.output


@pytest.mark.parametrize("depth", [1, 2, 4, 6])
def test_random_programs_have_their_depth_and_are_reproducible(depth):
    for seed in range(5):
        text = random_program(seed, depth)
        assert crasp.depth_of(crasp.parse_program(text)) == depth
        assert random_program(seed, depth) == text


def test_refusals_exit_2(zoo, tmp_path):
    runner = CliRunner()
    for args, message in (
            (["zoo", "build", "-o", str(zoo)], "already holds a crasp zoo"),
            (["zoo", "build", "-o", str(tmp_path / "z"), "--depths", "0:2", "--random", "1"],
             "--depths must satisfy"),
            (["zoo", "build", "-o", str(tmp_path / "z"), "--programs", "nothing*"],
             "the zoo would be empty"),
            (["zoo", "check", str(tmp_path)], "is not a zoo"),
            (["zoo", "score", str(zoo), "nope"], "has no model 'nope'"),
            (["zoo", "score", str(tmp_path), "dyck1"], "is not a zoo"),
            (["zoo", "score", str(zoo / "models" / "dyck1"), "dyck1"], "is not a zoo"),
            (["zoo", "score", str(zoo), "dyck1", "--drop", "999"], "no such node")):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output


def test_hook_table_points_at_the_values(tmp_path):
    """Every hook point of ``crasp zoo hooks`` holds its definition's value in the
    TransformerLens export, at every position."""
    import re

    import torch

    from crasp.interop import to_transformer_lens
    from crasp.realize import realize_float
    from crasp.realize.checkpoint import save_float_realization
    from crasp.train.checkpoint import load_checkpoint
    from crasp.zoo.hooks import hook_table

    for name in ("dyck2_bounded", "L3"):
        program = crasp.load_program(crasp.example(name))
        save_float_realization(tmp_path / name, realize_float(program, 40, "float64"), name, "")
        bridge = to_transformer_lens(load_checkpoint(tmp_path / name), n_ctx=24)
        strings = check_strings(list(program.alphabet), 5, 32, 2, 20)
        width = max(map(len, strings))
        ids = [[len(program.alphabet)] + [program.alphabet.index(t) for t in s]
               + [0] * (width - len(s)) for s in strings]
        _, cache = bridge.run_with_cache(torch.tensor(ids))
        trace = crasp.evaluate(program, strings).trace
        table = CliRunner().invoke(cli, ["zoo", "hooks", f"examples/{name}.crasp"]).output
        assert table == hook_table(program)
        checked = 0
        for row in table.split("\n\n")[0].splitlines()[2:]:
            definition, kind = [cell.strip() for cell in row.split("|")[1:3]]
            for hook, coordinate, below in re.findall(
                    r"(blocks\.\d+\.hook_(?:out|resid_mid))\[\.\.\., (\d+)\]( < 0)?", row):
                values = cache[hook][..., int(coordinate)].numpy()
                got = values[:, 1:] < 0 if below else values[:, 1:] > 0.5
                for row_index, string in enumerate(strings):
                    expected = np.asarray(trace[definition][row_index][:len(string)], bool)
                    assert np.array_equal(got[row_index, :len(string)], expected), (
                        name, definition, hook, string)
                checked += 1
        assert checked >= 3


@pytest.mark.parametrize("meta", ["{", "[]", '{"circuit": 3}', '{"circuit": {"nodes": ["x"]}}',
                                  "{}"])
def test_a_broken_model_summary_is_one_message(zoo, tmp_path, meta):
    """Every kind of broken meta.json (not JSON, not an object, no circuit, nodes that are not
    numbers): exit status 2 naming the file, never a traceback."""
    import shutil
    copy = tmp_path / "zoo"
    shutil.copytree(zoo, copy)
    (copy / "models" / "dyck1" / "meta.json").write_text(meta)
    result = CliRunner().invoke(cli, ["zoo", "score", str(copy), "dyck1"])
    assert result.exit_code == 2 and "meta.json is not a zoo model's summary" in result.output
    assert "Traceback" not in result.output


def test_build_and_check_show_progress_only_when_asked(tmp_path):
    """A zoo of thousands of models takes minutes to build and longer to check (0.07 s and
    0.4 s a model here): both count their models on stderr with --progress."""
    arguments = ["zoo", "build", "-o", str(tmp_path / "z"), "--programs", "dyck1", "--random",
                 "2", "--depths", "1:2"]
    quiet = CliRunner().invoke(cli, arguments)
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output
    shown = CliRunner().invoke(cli, [*arguments, "--force", "--progress"])
    assert shown.exit_code == 0, shown.output
    assert "random programs: 100%" in shown.stderr and "2/2" in shown.stderr
    assert "compiled: 100%" in shown.stderr and "3/3" in shown.stderr
    checked = CliRunner().invoke(cli, ["zoo", "check", str(tmp_path / "z"), "--progress"])
    assert checked.exit_code == 0, checked.output
    assert "checked: 100%" in checked.stderr and "3/3" in checked.stderr
    assert "checked" not in CliRunner().invoke(cli, ["zoo", "check", str(tmp_path / "z")]).stderr

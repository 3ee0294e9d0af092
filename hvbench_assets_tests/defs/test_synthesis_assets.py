"""The six descriptive task assets on a real clip (labels L1-L10 offline, L4/L5 and the synthesis from a
loopback OpenAI-compatible server scripted per model): the stored chain, recomputed by hand, the final
options, 0 requests on a rerun, a weight change that re-ranks from stored scores, and the blocked cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hvbench_assets.core.synthesis.checks import check_options
from hvbench_assets.core.tasks.families.human_to_text import QUESTION as H2T_FIXED_QUESTION
from hvbench_assets.core.synthesis.steps import SYNTHESIS_STEPS
from hvbench_assets.core.synthesis.words import polarity
from hvbench_assets.core.tasks.store import QUESTIONS, TASK_CANDIDATES
from hvbench_assets.core.vision.tables import HUMAN_TRACKS
from hvbench_assets.defs.labels.descriptions import appearance, facial_description
from hvbench_assets.defs.resources import WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets.testkit.scripted_synthesis import KIND_QUESTIONS, KIND_TRUTHS, TRUTH, Script
from hvbench_assets_tests.real_labels import labelled

SIX = ("emotion_recognition", "emotion_temporal_analysis", "emotion_intensity_comparison", "human_to_text",
       "behavior_temporal_analysis", "behavior_causality_analysis")
ASSETS = [appearance, facial_description] + [a for a in TASK_ASSETS if a.key.to_user_string() in SIX]
WEIGHTS = {"a1": 2.0, "a2": 1.0, "a3": 1.0}
H2T_DISTRACTORS = ["The person is the man in a blue shirt in front of a window.",
                   "The person is the woman in a white shirt in front of a map.",
                   "The person is the man in a white shirt beside a bookshelf."]


def models_file(path, url, weights=WEIGHTS, active=("a1", "a2", "a3")):
    ids = {"w": "org/writer", "a1": "org/strong", "a2": "org/mid", "a3": "org/weak"}
    entries = "".join(f'[models.{n}]\nmodel_id = "{m}"\nweight = {weights.get(n, 1.0)}\n' for n, m in ids.items())
    path.write_text(f'describer = "w"\nactive = {json.dumps(list(active))}\nmin_answerers = 3\n'
                    f'[defaults]\nbase_url = "{url}"\nmax_frames = 4\nmax_side = 160\n{entries}')
    return str(path)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = labelled(tmp_path_factory, "two_people_talking.mp4", "tpt")
    script = Script()
    script.questions = dict(KIND_QUESTIONS)  # ER, ETA, BCA answered in their kinds; BTA by the default script
    with FakeOpenAIServer(responder=script) as server:
        path = models_file(root / "models.toml", server.base_url)
        result, wh = materialize(root, "tpt", ASSETS, path, describer="w")
        yield {"root": root, "server": server, "wh": wh, "result": result, "models": path, "script": script}


def by_abbrev(wh, spec, vid="tpt"):
    return {r["abbrev"]: r for r in wh.rows(spec, video_id=vid)}


def test_selection_verdicts_on_the_real_clip(run):
    cands = by_abbrev(run["wh"], TASK_CANDIDATES)
    for abbrev in ("ER", "ETA", "BTA", "BCA"):
        assert cands[abbrev]["status"] == "selected", cands[abbrev]
    assert cands["H2T"]["status"] == "rejected" and cands["H2T"]["reason"] == "people=2 not in 3..7"
    assert cands["EIC"]["status"] == "rejected" and "tracks sharing the longest presence" in cands["EIC"]["reason"]


@pytest.mark.parametrize("abbrev", ["ER", "ETA", "BTA", "BCA"])
def test_stored_chain_recomputes_to_the_stored_question(run, abbrev):
    wh = run["wh"]
    q = by_abbrev(wh, QUESTIONS)[abbrev]
    steps = wh.rows(SYNTHESIS_STEPS, video_id="tpt", task=q["task"], order_by="seq")
    assert steps and all(s["question_id"] == q["question_id"] for s in steps)
    # weighted totals by hand from the score rows
    scores = [s for s in steps if s["step"] == "score"]
    assert {s["model"]: s["weight"] for s in scores} == WEIGHTS
    total = next(s for s in steps if s["step"] == "total")["payload"]
    n = len(total["candidates"])
    by_hand = [sum(s["weight"] * s["payload"]["scores"][str(i)] for s in scores) for i in range(1, n + 1)]
    assert by_hand == total["totals"]
    winner = max(range(n), key=lambda i: (by_hand[i], -i))
    # the weak model's, through the weights
    assert total["candidates"][winner]["text"] == q["answer_text"] == KIND_TRUTHS.get(abbrev, TRUTH)
    assert max(range(n), key=lambda i: (sum(s["payload"]["scores"][str(i + 1)] for s in scores), -i)) != winner
    # the final options: the winner plus the last perturbation, and the check recomputes
    pert = [s for s in steps if s["step"] == "perturbation" and s["status"] == "ok"][-1]["payload"]
    assert sorted(o["text"] for o in q["options"]) == sorted([q["answer_text"], *pert["distractors"]])
    check = check_options(q["answer_text"], pert["distractors"], tuple(q["rule_params"]["build"]["length_band"]))
    assert check.ok and check.length_ratios == [s for s in steps if s["step"] == "check"][-1]["payload"]["length_ratios"]
    # every call id of the chain is a model_calls row named by the question
    ids = {s["call_id"] for s in steps if s["call_id"]}
    assert ids == set(q["call_ids"])
    assert wh.query(f"SELECT count(*) AS n FROM model_calls WHERE id IN ({','.join('?' * len(ids))})",
                    list(ids))[0]["n"] == len(ids)
    assert q["marking"] == {"kind": "red_box", "track_ids": q["target_track_ids"]}


def test_er_polarity_and_caption_from_labels(run):
    wh = run["wh"]
    q = by_abbrev(wh, QUESTIONS)["ER"]
    assert q["rule_params"]["polarity"] == polarity(q["answer_text"])
    cap = wh.rows(SYNTHESIS_STEPS, video_id="tpt", task=q["task"], step="caption")[0]
    assert cap["payload"]["source"] == "labels" and "smiles" in cap["payload"]["facial_description"]


def test_metadata_counts_calls_and_agreement(run):
    mats = {e.asset_key.to_user_string(): e.materialization.metadata
            for e in run["result"].get_asset_materialization_events()}
    md = mats["behavior_temporal_analysis"]
    assert md["synthesis_calls"].data["made"] > 0 and md["synthesis_calls"].data["tokens_in"] > 0
    assert md["ensemble_agreement"].data == {"a1": "0/1", "a2": "0/1", "a3": "1/1"}
    assert md["answerers"].data == WEIGHTS


def test_rerank_command_from_stored_scores(run, capsys):
    from hvbench_assets.cli import main as cli

    sent = run["server"].request_count
    assert cli(["rerank", "--warehouse", str(run["root"] / "wh.duckdb"), "--weight", "a1=1", "--task", "BTA"]) == 0
    out = capsys.readouterr().out
    assert "CHANGES" in out and "[21.0, 16.0, 17.0, 18.0]" in out and "[26.0, 22.0, 19.0, 27.0]" in out
    assert "1 question(s) re-ranked from stored scores, 1 with another winner; no model calls" in out
    assert run["server"].request_count == sent
    assert cli(["rerank", "--warehouse", str(run["root"] / "wh.duckdb"), "--weight", "a1"]) == 2


def test_rerun_sends_nothing_and_a_weight_change_reranks_without_answer_or_score_calls(run, tmp_path):
    server, root = run["server"], run["root"]
    sent = server.request_count
    result, wh = materialize(root, "tpt", ASSETS, run["models"], describer="w")
    assert server.request_count == sent
    md = {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}
    assert md["emotion_recognition"]["synthesis_calls"].data["made"] == 0
    # equal weights: the writer's draft answer wins; only the perturbation of the new runners-up is asked
    equal = models_file(tmp_path / "equal.toml", server.base_url, weights={})
    materialize(root, "tpt", ASSETS[2:], equal, describer="w")
    new = server.requests[sent:]
    assert new and all("Draft wrong options" in r.prompt for r in new)
    q = by_abbrev(wh, QUESTIONS)["BTA"]
    assert q["answer_text"] == "The person waves, sits down and drinks water."
    materialize(root, "tpt", ASSETS[2:], run["models"], describer="w")  # back: everything cached
    assert all("Draft wrong options" in r.prompt for r in server.requests[sent:])


def test_fewer_answerers_than_the_minimum_block_naming_the_settings(run, tmp_path):
    two = models_file(tmp_path / "two.toml", run["server"].base_url, active=("a1", "a2"))
    materialize(run["root"], "tpt", ASSETS[2:], two, describer="w")
    cands = by_abbrev(run["wh"], TASK_CANDIDATES)
    for abbrev in ("ER", "ETA", "EIC", "H2T", "BTA", "BCA"):
        assert cands[abbrev]["status"] == "blocked"
        assert "at least 3 answering models; 2 configured (a1, a2)" in cands[abbrev]["reason"]
        assert "HVBENCH_MLLM_MODELS" in cands[abbrev]["reason"]
    assert not run["wh"].rows(SYNTHESIS_STEPS, video_id="tpt")
    materialize(run["root"], "tpt", ASSETS[2:], run["models"], describer="w")  # restore for other tests


def test_without_models_the_six_are_blocked_and_the_run_completes(run):
    materialize(run["root"], "tpt", ASSETS[2:])  # a models file that does not exist
    cands = by_abbrev(run["wh"], TASK_CANDIDATES)
    for abbrev in ("ER", "ETA", "EIC", "H2T", "BTA", "BCA"):
        assert cands[abbrev]["status"] == "blocked" and "HVBENCH_MODELS_FILE" in cands[abbrev]["reason"]
        assert "HVBENCH_MLLM_MODELS" in cands[abbrev]["reason"]
    materialize(run["root"], "tpt", ASSETS[2:], run["models"], describer="w")  # restore (cached)


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """five_people_grid: 5 faces side by side, so H2T (3-7 people) and EIC (tracks sharing the longest presence)."""
    root = labelled(tmp_path_factory, "five_people_grid.mp4", "grid")
    script = Script()
    script.perturb = [H2T_DISTRACTORS]
    script.questions = {"ER": KIND_QUESTIONS["ER"]}  # ER in its kind; H2T by the answers below
    script.answers = {"org/strong": "The person is the man in the white shirt and tie on the right.",
                      "org/mid": "The person is the girl on the left, holding paper.",
                      "org/weak": "The person is the man in a white shirt in front of a map."}
    with FakeOpenAIServer(responder=script) as server:
        path = models_file(root / "models.toml", server.base_url)
        _, wh = materialize(root, "grid", ASSETS, path, describer="w")
        yield {"root": root, "server": server, "wh": wh, "script": script}


def test_grid_h2t_chain_and_eic_verdict(grid):
    wh = grid["wh"]
    cands = by_abbrev(wh, TASK_CANDIDATES, "grid")
    assert cands["H2T"]["status"] == "selected" and cands["ER"]["status"] == "selected"
    # the grid shows 5 faces the whole clip; L1 keeps 4 of them for every frame, so EIC's clip rule (more than 3
    # tracks share the longest presence) passes, and the chain stops at the answers: the script has none for EIC
    eic = cands["EIC"]
    frames = [t["n_frames"] for t in wh.rows(HUMAN_TRACKS, video_id="grid")]
    assert 3 < frames.count(max(frames)) < 7
    assert (eic["status"], eic["reason"]) == ("failed", "0 usable candidate answer(s); the ranking needs 2")
    q = by_abbrev(wh, QUESTIONS, "grid")["H2T"]
    assert q["question"] == H2T_FIXED_QUESTION
    assert q["answer_text"] == grid["script"].answers["org/weak"]  # 2 x strong's 9 lifts the weak model's answer
    assert sorted(o["text"] for o in q["options"]) == sorted([q["answer_text"], *H2T_DISTRACTORS])
    steps = wh.rows(SYNTHESIS_STEPS, video_id="grid", task=q["task"], order_by="seq")
    assert [s["step"] for s in steps][:6] == ["caption", "question", "answer", "answer", "answer", "answer"]
    assert steps[0]["payload"]["parsed"] == grid["script"].h2t_caption == steps[2]["payload"]["text"]
    assert all(s["payload"]["text"].startswith("The person is") for s in steps if s["step"] == "answer")
    assert Path(q["video_path"]).exists() and q["marking"]["kind"] == "red_box"

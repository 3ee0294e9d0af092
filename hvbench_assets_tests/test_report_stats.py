"""`hvbench eval --circular` with two models against a real loopback OpenAI-compatible server, then `hvbench report`:
clip-clustered intervals, the paired comparison, accuracy over option orders, demographic slices from the
warehouse labels of each question's target, and the text-bias section."""

from __future__ import annotations

import csv

import pytest

from hvbench_assets.cli import main
from hvbench_assets.core.audio.tables import VOICE_DEMOGRAPHICS
from hvbench_assets.core.tasks.store import QUESTIONS
from hvbench_assets.core.vision.tables import DEMOGRAPHICS
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.testkit.bench_factory import SPEC, item_of, make_benchmark, right_letter
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer

# item i of every task is about clip i: the target of clip 0 is a man, of clip 1 a woman, of clip 2 a girl
TARGETS = {0: ("male", "adult", "male"), 1: ("female", "adult", "female"), 2: ("female", "child", "child")}


def responder(items):
    def respond(req):
        if req.model == "good":
            return right_letter(req.prompt, items)
        item = item_of(req.prompt, items)
        # "wobbly" is right on clip 0 only, whatever the option order
        return right_letter(req.prompt, items) if item.qid.endswith("_0") else "A"
    return respond


def warehouse_labels(wh: Warehouse, items) -> None:
    questions = [{"question_id": it.qid, "video_id": f"clip{it.qid.rsplit('_', 1)[1]}", "task": it.task,
                  "target_track_ids": [1]} for it in items]
    for q in questions:
        wh.replace(QUESTIONS, {"video_id": q["video_id"], "task": q["task"]}, [q])
    for i, (gender, age, voice) in TARGETS.items():
        wh.replace(DEMOGRAPHICS, {"video_id": f"clip{i}"},
                   [{"track_id": 1, "status": "ok", "gender": gender, "age_class": age}])
        wh.replace(VOICE_DEMOGRAPHICS, {"video_id": f"clip{i}"}, [{"status": "ok", "voice_class": voice}])


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    base = tmp_path_factory.mktemp("stats")
    root = base / "statsbench"
    items = make_benchmark(root, with_audio=False)
    wh_path = base / "wh.duckdb"
    warehouse_labels(Warehouse(wh_path), items)
    with FakeOpenAIServer(responder=responder(items)) as server:
        (base / "models.toml").write_text("\n".join(
            f'[models.{n}]\nmodel_id = "{n}"\nbase_url = "{server.base_url}"\nmax_frames = 16\n'
            for n in ("good", "wobbly")))
        assert main(["eval", "--benchmark", str(root), "--model", "good", "--model", "wobbly", "--frames", "2",
                     "--circular", "--warehouse", str(wh_path), "--models-file", str(base / "models.toml"),
                     "--no-progress", "--concurrency", "2"]) == 0
        assert server.request_count == 2 * sum(n_options * 3 for _, n_options in SPEC)  # every rotation
    return base, root, wh_path, items


def report(base, root, wh_path, capsys, *extra) -> str:
    capsys.readouterr()
    assert main(["report", "--benchmark", str(root), "--warehouse", str(wh_path), "--out", str(base / "report"),
                 *extra]) == 0
    return capsys.readouterr().out


def table_rows(md: str, title: str) -> list[list[str]]:
    section = md.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|") and not line.startswith("|---")][1:]


def test_report_shows_clustered_intervals_paired_comparison_orders_and_slices(evaluated, capsys):
    base, root, wh_path, items = evaluated
    md = report(base, root, wh_path, capsys, "--slice-min-items", "10", "--bootstrap", "500")
    assert "21 item(s) by warehouse clip" in md and "500 resamples, seed 0" in md
    intervals = {r[0]: r for r in table_rows(md, "Confidence intervals")}
    assert intervals["good"][1] == "100.0 [100.0, 100.0]"
    lo, hi = (float(x) for x in intervals["wobbly"][1].split("[")[1].rstrip("]").split(","))
    assert lo < float(intervals["wobbly"][1].split()[0]) < hi
    # three clips: clustering by clip gives a wider interval than 21 independent items
    naive_lo, naive_hi = (float(x) for x in intervals["wobbly"][2].split("[")[1].rstrip("]").split(","))
    assert hi - lo > naive_hi - naive_lo

    (paired,) = table_rows(md, "Paired comparison")
    assert paired[:3] == ["good", "wobbly", "21 (3)"] and paired[3].startswith("+")

    orders = {r[0]: r for r in table_rows(md, "Accuracy over option orders")}
    assert orders["good"][1].startswith("100.0 ± 0.0")
    # always "A": right on clips 1-2 only under the rotations that bring the truth to A
    assert any(c.endswith("(n=4)") and " ± 0.0 " not in c for c in orders["wobbly"][2:])
    assert orders["wobbly"][1].endswith("(n=2)")  # overall: only rotations every task has (a 2-option task)

    slices = {(r[0], r[1], r[2]): r for r in table_rows(md, "Accuracy by target person")}
    assert slices[("good", "L3 gender", "female")][3:5] == ["14", "2"]
    assert slices[("wobbly", "L3 gender", "male")][5] == "too few items (< 10)"  # 7 items on clip 0
    assert slices[("wobbly", "L10 voice class", "male")][3] == "7"
    # wobbly, published order: right on clip 0, and on clips 1-2 where the truth is A
    female_right = sum(it.answer == "A" for it in items if not it.qid.endswith("_0"))
    assert slices[("wobbly", "L3 gender", "female")][5].startswith(f"{100 * female_right / 14:.1f} [")
    assert slices[("good", "L3 age class", "adult")][5].startswith("100.0")

    bias = table_rows(md, "Text bias")
    assert len(bias) == len(SPEC) and all("not scored" in r[-1] for r in bias)  # 3 items per task
    html = (base / "report" / "report.html").read_text()
    assert all(f"<h2>{t}" in html for t in ("Confidence intervals", "Paired comparison", "Accuracy over option orders",
                                              "Accuracy by target person", "Text bias"))
    with (base / "report" / "flagged_items.csv").open() as fh:
        assert "text_bias_p_true" in next(csv.reader(fh))


def test_the_report_is_reproducible_and_the_seed_matters(evaluated, capsys):
    base, root, wh_path, _ = evaluated
    first = report(base, root, wh_path, capsys, "--bootstrap", "300")
    assert report(base, root, wh_path, capsys, "--bootstrap", "300") == first
    other = report(base, root, wh_path, capsys, "--bootstrap", "300", "--bootstrap-seed", "5")
    assert table_rows(other, "Confidence intervals") != table_rows(first, "Confidence intervals")

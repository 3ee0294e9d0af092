"""End to end in the system chromium: questions from the task layer on two shared clips, an annotator enters
an HC count and an action-time pair with the keyboard, the annotation sensor rebuilds HC/TSA, two reviewers
review the same items blind with shortcuts, a third settles their dispute, kappa matches scikit-learn, a
rejected question leaves the accepted set and a regenerated one returns to the queue.

The tests of this module run in order and share one warehouse (each step builds on the previous one)."""

from __future__ import annotations

import dagster as dg
import pytest
from sklearn.metrics import cohen_kappa_score

from hvbench_assets.cli import main as cli
from hvbench_assets.core.curation.agreement import kappa_table
from hvbench_assets.core.curation.store import decisions
from hvbench_assets.core.curation.tables import REVIEWED_QUESTIONS
from hvbench_assets.core.tasks.store import ANNOTATIONS, QUESTIONS, question_content_hash
from hvbench_assets.core.warehouse import Warehouse
from hvbench_assets.defs.curation.assets import reviewed_questions
from hvbench_assets.defs.curation.sensors import review_sensor
from hvbench_assets.defs.resources import SettingsResource, WarehouseResource
from hvbench_assets.defs.tasks.assets import TASK_ASSETS
from hvbench_assets.defs.tasks.sensors import annotation_sensor
from hvbench_assets.testkit.label_chain import materialize
from hvbench_assets_tests.review.harness import SHOWN, chromium_or_skip, current_qid, option_key, review_server, wait_after

pytestmark = pytest.mark.slow
ASSETS = {a.key.to_user_string(): a for a in TASK_ASSETS}


@pytest.fixture(scope="module")
def env(two_clips, two_clips_built):
    chromium = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with review_server(two_clips, media_roots=(two_clips_built / "data",)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        yield {"root": two_clips, "url": url, "browser": browser, "wh": Warehouse(two_clips / "wh.duckdb"), "pages": {}}
        browser.close()


def person(env, name: str):
    """A browser context of its own per reviewer (own cookie), named on the start page."""
    if name not in env["pages"]:
        page = env["browser"].new_context().new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(env["url"] + "/")
        page.fill("#name", name)
        page.keyboard.press("Enter")
        page.wait_for_selector("text=Review queue")
        page.errors = errors
        env["pages"][name] = page
    return env["pages"][name]


def questions(env) -> dict[str, dict]:
    return {q["abbrev"]: q for q in env["wh"].rows(QUESTIONS)}


def run_annotation_sensor(env) -> int:
    """One tick of annotation_sensor; its run requests are executed the way the daemon would."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("videos", ["duo", "fpg"])
    res = {"warehouse": WarehouseResource(path=str(env["root"] / "wh.duckdb"))}
    cursor = env.get("annotation_cursor")
    result = annotation_sensor(dg.build_sensor_context(instance=instance, resources=res, cursor=cursor))
    env["annotation_cursor"] = result.cursor
    for req in result.run_requests:
        materialize(env["root"], req.partition_key, [ASSETS[k.to_user_string()] for k in req.asset_selection])
    return len(result.run_requests)


def run_review_sensor(env) -> dict[str, str]:
    wh_res = WarehouseResource(path=str(env["root"] / "wh.duckdb"))
    result = review_sensor(dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral(), resources={"warehouse": wh_res},
                                                   cursor=env.get("review_cursor")))
    env["review_cursor"] = result.cursor
    assert len(result.run_requests) == 1
    res = {"settings": SettingsResource(data_dir=str(env["root"] / "data"), review_exclude="none"), "warehouse": wh_res}
    assert dg.materialize([reviewed_questions], resources=res).success
    return {r["abbrev"]: r["state"] for r in env["wh"].rows(REVIEWED_QUESTIONS)}


def press_option(page, letter: str) -> None:
    page.keyboard.press(option_key(page, letter))


def other_letter(q: dict) -> str:
    return next(o["letter"] for o in q["options"] if o["letter"] != q["answer"])


def test_annotator_enters_a_count_and_an_action_time_pair(env):
    page = person(env, "ann")
    page.goto(env["url"] + "/annotate")
    page.wait_for_function(SHOWN)
    seen = set()
    while not page.is_visible("#empty"):
        page.wait_for_function("document.getElementById('video').readyState >= 1")
        qid = current_qid(page)
        if page.is_visible("#count-form"):
            seen.add("count")
            page.keyboard.press("5")
            page.keyboard.press("Enter")
        else:
            seen.add("action")
            for _ in range(3):
                page.keyboard.press("ArrowRight")  # scrub to second 3 ...
            page.wait_for_function("Math.abs(document.getElementById('video').currentTime - 3) < 0.01")
            page.keyboard.press("t")  # ... and take the current time
            page.keyboard.press("e")
            page.keyboard.type("begins to turn her head to the left")
            page.keyboard.press("Enter")
        wait_after(page, qid)
        assert page.evaluate("document.activeElement === document.body")  # the next item's keys reach the page
    assert seen == {"count", "action"} and not page.errors
    anns = {a["kind"]: a for a in env["wh"].rows(ANNOTATIONS)}
    assert anns["count"]["value"] == {"count": 5} and anns["count"]["video_id"] == "fpg"
    assert anns["action"]["value"] == {"action": "begins to turn her head to the left", "start_s": 3}
    assert anns["action"]["annotator"] == "ann" and anns["action"]["track_id"] is not None
    page.goto(env["url"] + "/")
    assert page.locator("#flow").inner_text().count("waiting for annotation_sensor") == 2


def test_annotation_sensor_rebuilds_hc_and_tsa(env):
    assert run_annotation_sensor(env) == 2
    qs = questions(env)
    assert qs["HC"]["status"] == "draft" and qs["HC"]["answer_text"] == "5"
    assert qs["TSA"]["answer_text"] == "At 3 s" and "begins to turn her head to the left" in qs["TSA"]["question"]
    page = person(env, "ann")
    page.goto(env["url"] + "/")
    assert "question rebuilt" in page.locator("#flow").inner_text()


PLANS = {  # abbrev -> reviewer -> (blind pick, keys after the reveal); "ans" / "other" resolved per question.
    # Picking the proposed answer blind accepts it (one key); another pick reveals it: a accept, c my pick.
    "ASD": {"ann": ("ans", []), "bob": ("ans", [])},
    "HC": {"ann": ("ans", []), "bob": ("other", ["c"])},
    "TSA": {"ann": ("other", ["a"]), "bob": ("ans", [])},
    "AVAD": {"ann": ("ans", [])},  # not assigned: the first reviewer settles it alone
}


def review_with_keys(env, name: str) -> list[str]:
    page = person(env, name)
    page.goto(env["url"] + "/review")
    page.wait_for_function(SHOWN)
    by_id = {q["question_id"]: q for q in questions(env).values()}
    done = []
    while not page.is_visible("#empty"):
        qid = current_qid(page)
        q = by_id[qid]
        pick, keys = PLANS[q["abbrev"]][name]
        letter = {"ans": q["answer"], "other": other_letter(q)}
        assert page.locator("#options li.proposed").count() == 0 and page.is_hidden("#phase-reveal")  # blind
        press_option(page, letter[pick])
        if keys:
            page.wait_for_selector("#phase-reveal:not([hidden])")
            assert page.inner_text("#proposed") == q["answer_text"]
        for k in keys:
            page.keyboard.press(k)
        wait_after(page, qid)
        done.append(q["abbrev"])
    assert not page.errors
    return done


def test_two_reviewers_review_the_same_items_with_shortcuts(env, capsys):
    wh_path = str(env["root"] / "wh.duckdb")
    assert cli(["review-assign", "--warehouse", wh_path, "--reviewers", "ann,bob", "--task", "ASD,HC,TSA"]) == 0
    assert "3 question(s); 6 new assignment(s)" in capsys.readouterr().out
    assert sorted(review_with_keys(env, "ann")) == ["ASD", "AVAD", "HC", "TSA"]
    assert sorted(review_with_keys(env, "bob")) == ["ASD", "HC", "TSA"]
    ds = decisions(env["wh"])
    assert len(ds) == 7 and all(d["seconds_spent"] > 0 and d["shown_order"] for d in ds)
    states = run_review_sensor(env)
    assert states == {"ASD": "accepted", "HC": "disputed", "TSA": "accepted", "AVAD": "accepted"}


def test_kappa_matches_scikit_learn_on_the_same_labels(env):
    qs = questions(env)
    pairs = []
    for abbrev in ("ASD", "HC", "TSA"):
        q = qs[abbrev]
        pick = {"ans": q["answer"], "other": other_letter(q)}
        pairs.append((pick[PLANS[abbrev]["ann"][0]], pick[PLANS[abbrev]["bob"][0]]))
    expected = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    rows = {r["task"]: r for r in kappa_table(env["wh"].rows(QUESTIONS), decisions(env["wh"]), "blind")}
    assert rows["all"]["items"] == 3 and rows["all"]["kappa"] == pytest.approx(expected)
    assert rows["all"]["agreement"] == pytest.approx(1 / 3)
    page = person(env, "ann")
    page.goto(env["url"] + "/agreement")
    text = page.inner_text("#kappa-blind")
    assert f"{expected:.3f}" in text and "ann / bob" in text
    assert qs["HC"]["question_id"] in page.inner_text("#disputed")


def test_a_third_person_settles_the_dispute(env):
    qs = questions(env)
    assert person(env, "ann").goto(env["url"] + "/adjudicate") and person(env, "ann").is_visible("#empty")
    page = person(env, "cai")
    page.goto(env["url"] + "/adjudicate")
    page.wait_for_function(SHOWN)
    assert current_qid(page) == qs["HC"]["question_id"] and "bob: correct" in page.inner_text("#votes")
    letters = [o["letter"] for o in qs["HC"]["options"]]
    page.keyboard.press(str(letters.index(qs["HC"]["answer"]) + 1))
    page.wait_for_selector("#empty:not([hidden])")
    assert run_review_sensor(env)["HC"] == "accepted"
    page.goto(env["url"] + "/agreement")
    cells = page.eval_on_selector_all("#accuracy tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert ["ann", "HC", "1", "1", "1.00"] in cells and ["bob", "HC", "1", "0", "0.00"] in cells


def test_a_rejected_question_leaves_the_accepted_set(env):
    accepted = {r["abbrev"] for r in env["wh"].rows(REVIEWED_QUESTIONS) if r["state"] in ("accepted", "corrected")}
    assert accepted == {"ASD", "HC", "TSA", "AVAD"}
    avad = questions(env)["AVAD"]
    page = person(env, "ann")
    page.goto(env["url"] + f"/questions/{avad['question_id']}")
    assert "accepted" in page.inner_text("#state")
    page.click("#review-again")
    page.wait_for_function(SHOWN)
    page.keyboard.press("r")  # rejecting needs no blind pick: two keys
    page.keyboard.press("2")  # frozen or broken video
    wait_after(page, avad["question_id"])
    states = run_review_sensor(env)
    assert states["AVAD"] == "rejected"
    accepted = {r["abbrev"] for r in env["wh"].rows(REVIEWED_QUESTIONS) if r["state"] in ("accepted", "corrected")}
    assert accepted == {"ASD", "HC", "TSA"}
    page.goto(env["url"] + f"/questions/{avad['question_id']}")
    assert page.inner_text("#state") == "rejected" and "frozen_video" in page.inner_text("#decisions")


def test_question_page_shows_provenance_and_dagster_links(env):
    asd = questions(env)["ASD"]
    page = person(env, "bob")
    page.goto(env["url"] + f"/questions/{asd['question_id']}")
    links = page.eval_on_selector_all("a[target=_blank]", "els => els.map(e => e.href)")
    assert "http://127.0.0.1:3999/assets/active_speaker_detection?view=partitions&partition=duo" in links
    prov = page.inner_text("#provenance")
    assert "speaker_scores" in prov and asd["question_id"] in prov
    assert page.locator("#decisions tr").count() == 3  # header + ann + bob


def test_a_regenerated_question_returns_to_the_queue(env):
    old = questions(env)["TSA"]
    track = old["target_track_ids"][0]
    wh_path = str(env["root"] / "wh.duckdb")
    assert cli(["annotate", "--warehouse", wh_path, "--annotator", "dan", "action", "duo", "--track", str(track),
                "--action", "begins to turn her head to the left", "--start", "9"]) == 0
    assert run_annotation_sensor(env) == 1
    new = questions(env)["TSA"]
    assert new["question_id"] == old["question_id"] and question_content_hash(new) != question_content_hash(old)
    assert run_review_sensor(env)["TSA"] == "unreviewed"
    page = person(env, "bob")
    page.goto(env["url"] + "/review")
    page.wait_for_function(SHOWN)
    assert current_qid(page) == new["question_id"]
    assert len(decisions(env["wh"])) == 9  # append-only: the decisions on the old version are kept


def test_written_corrections_and_other_reasons_by_keyboard(env):
    tsa = questions(env)["TSA"]
    bob = person(env, "bob")  # still on the regenerated TSA from the previous test
    bob.keyboard.press("0")  # cannot tell: the proposed answer is shown
    bob.wait_for_selector("#phase-reveal:not([hidden])")
    bob.keyboard.press("w")
    bob.keyboard.type("At 8 s")
    bob.keyboard.press("Enter")
    wait_after(bob, tsa["question_id"])
    ann = person(env, "ann")
    ann.goto(env["url"] + "/review")
    ann.wait_for_function(SHOWN)
    press_option(ann, other_letter(tsa))
    ann.wait_for_selector("#phase-reveal:not([hidden])")
    ann.keyboard.press("r")
    ann.keyboard.press("5")  # other: a text is asked for
    ann.keyboard.type("the red box jumps to the other woman")
    ann.keyboard.press("Enter")
    wait_after(ann, tsa["question_id"])
    last = {d["reviewer"]: d for d in decisions(env["wh"])[-2:]}
    assert last["bob"]["action"] == "correct" and last["bob"]["corrected_text"] == "At 8 s"
    assert (last["ann"]["reason"], last["ann"]["reason_text"]) == ("other", "the red box jumps to the other woman")
    assert all(d["content_hash"] == question_content_hash(tsa) for d in last.values())
    assert run_review_sensor(env)["TSA"] == "disputed"
    assert not ann.errors and not bob.errors

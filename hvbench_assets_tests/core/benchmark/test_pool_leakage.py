"""The pool's balancing and the leakage rule as pure functions: exact selections, p-values against scipy."""

from __future__ import annotations

from math import comb

import pytest
from scipy.stats import binomtest

from hvbench_assets.core.benchmark.leakage import (
    binomial_p,
    blind_jobs,
    guessable,
    leakage_verdicts,
    rotate,
    score_reply,
    verdict,
)
from hvbench_assets.core.benchmark.pool import (
    PoolSettings,
    _tiebreak,
    paper_targets,
    parse_targets,
    pool_summary,
    select_pool,
    split_quota,
)
from hvbench_assets.core.tasks.catalog import TASKS


def q(qid, abbrev="AVAD", answer="A", n=4, state="accepted", video=None, tracks=(), **extra):
    task = {"AVAD": "Audio_Visual_Alignment_Detection", "HC": "Human_Count", "ER": "Emotion_Recognition"}[abbrev]
    opts = [{"letter": "ABCDEFG"[i], "text": f"option {i} of {qid}"} for i in range(n)]
    return {"question_id": qid, "task": task, "abbrev": abbrev, "video_id": video or f"clip-{qid}", "state": state,
            "options": opts, "answer": answer, "answer_text": extra.pop("answer_text", opts["ABCDEFG".index(answer)]["text"]),
            "target_track_ids": list(tracks), "rule_params": extra.pop("rule_params", {}), "question": f"Q {qid}", **extra}


def chosen(decisions):
    return sorted(d.question_id for d in decisions if d.selected)


def test_paper_targets_keep_hc_strata_and_the_total():
    t = paper_targets()
    paper = [f.abbrev for f in TASKS if f.from_paper]
    assert t["HC"] == 174 and set(t) == {f.abbrev for f in TASKS} and len(paper) == 16
    assert 2475 - 15 <= sum(t[a] for a in paper) <= 2475
    assert parse_targets("ER=200, hc=10,Speech_Content_Matching=5") == {"ER": 200, "HC": 10, "SCM": 5}
    with pytest.raises(ValueError, match="XYZ=3"):
        parse_targets("XYZ=3")


def test_review_states_and_duplicates_decide_before_any_quota():
    rows = [q("q1"), q("q2", state="rejected"), q("q3", state="disputed"), q("q4", state="unreviewed"),
            q("q5", state="not_reviewed"), q("q6", state="corrected"),
            q("q7", video="clip-q1"), q("q8", video="clip-q1", tracks=[3])]  # q7: same clip and target as q1
    ds = {d.question_id: d for d in select_pool(rows, PoolSettings(targets={"AVAD": 10}))}
    assert chosen(ds.values()) == ["q1", "q5", "q6", "q8"]
    assert ds["q2"].reason == "review state rejected" and ds["q3"].reason == "review state disputed"
    assert ds["q4"].reason.startswith("review state unreviewed (set include_unreviewed")
    assert ds["q7"].reason == "same task, clip and target as q1"
    with_unreviewed = select_pool(rows, PoolSettings(targets={"AVAD": 10}, include_unreviewed=True))
    assert chosen(with_unreviewed) == ["q1", "q4", "q5", "q6", "q8"]


def test_target_cut_follows_the_id_hash_not_clip_order_or_letters():
    rows = [q(f"a{i}", answer="A") for i in range(4)] + [q("b", answer="B"), q("c", answer="C")]
    ds = select_pool(rows, PoolSettings(targets={"AVAD": 3}))
    # letters are balanced later, when the export is assembled (letters.py), so they do not steer the choice
    assert chosen(ds) == sorted(sorted((r["question_id"] for r in rows), key=_tiebreak)[:3])
    assert chosen(select_pool(list(reversed(rows)), PoolSettings(targets={"AVAD": 3}))) == chosen(ds)
    assert {d.reason for d in ds if not d.selected} == {"task target reached (3)"}


def test_hc_strata_scaled_and_strict_ratio():
    assert split_quota(6, [("3-5", 60), ("6-8", 60), ("9+", 54)]) == {"3-5": 2, "6-8": 2, "9+": 2}
    assert split_quota(174, [("3-5", 60), ("6-8", 60), ("9+", 54)]) == {"3-5": 60, "6-8": 60, "9+": 54}
    counts = {"h1": 3, "h2": 4, "h3": 5, "h4": 5, "h5": 7, "h6": 9, "h7": 12, "h8": 15, "h9": 2}
    rows = [q(k, abbrev="HC", answer_text=str(v)) for k, v in counts.items()]
    settings = PoolSettings(targets={"HC": 174}, scale=6 / 174)
    ds = {d.question_id: d for d in select_pool(rows, settings)}
    picked = [k for k in counts if ds[k].selected]
    assert len([k for k in picked if 3 <= counts[k] <= 5]) == 2 and "h5" in picked
    assert len([k for k in picked if counts[k] >= 9]) == 2 and len(picked) == 5
    assert ds["h9"].reason == "people=2 outside the HC strata 3-5, 6-8, 9+"
    assert {ds[k].reason for k in ("h1", "h2", "h3", "h4") if not ds[k].selected} == {"stratum 3-5 full (2 of target 6)"}
    strict = {d.question_id: d for d in select_pool(rows, PoolSettings(targets={"HC": 6}, strict_ratio=True))}
    assert [k for k in counts if strict[k].selected and counts[k] >= 9] == []  # 1 in 6-8 allows 1 : 1 : 0
    assert strict["h5"].selected and sum(strict[k].selected for k in ("h1", "h2", "h3", "h4")) == 1


def test_er_polarity_one_one_two_and_the_summary():
    pol = ["positive"] * 3 + ["neutral"] * 3 + ["negative"] * 5 + [None]
    rows = [q(f"e{i}", abbrev="ER", rule_params={"polarity": p} if p else {}) for i, p in enumerate(pol)]
    ds = select_pool(rows, PoolSettings(targets={"ER": 8}))
    taken = {}
    for d in ds:
        if d.selected:
            taken[d.stratum] = taken.get(d.stratum, 0) + 1
    assert taken == {"positive": 2, "neutral": 2, "negative": 4}
    summary = pool_summary(ds)["ER"]
    assert summary["available"] == 12 and summary["selected"] == 8
    assert summary["left_out"]["ER question without a polarity (rule_params.polarity=None)"] == 1


@pytest.mark.parametrize("k,n,m", [(4, 4, 4), (3, 4, 4), (0, 4, 4), (5, 8, 2), (7, 12, 4), (2, 3, 3)])
def test_binomial_p_is_scipys_one_sided_test(k, n, m):
    expected = sum(comb(n, i) * (1 / m) ** i * (1 - 1 / m) ** (n - i) for i in range(k, n + 1))
    assert binomial_p(k, n, 1 / m) == pytest.approx(binomtest(k, n, 1 / m, alternative="greater").pvalue)
    assert binomial_p(k, n, 1 / m) == pytest.approx(expected)


def test_removal_rule_level_and_share():
    assert verdict("q", "T", 4, 4, 4, 0, alpha=0.05, max_share=1.0).removed  # p = 1/256
    kept = verdict("q", "T", 4, 3, 4, 0, alpha=0.05, max_share=0.8)  # p = 0.0508
    assert not kept.removed and kept.p_value == pytest.approx(13 / 256)
    assert verdict("q", "T", 4, 3, 4, 0, alpha=0.05, max_share=0.5).removed  # share 0.75 > 0.5
    assert verdict("q", "T", 4, 3, 4, 0, alpha=0.06, max_share=1.0).removed
    untested = verdict("q", "T", 4, 0, 0, 4, alpha=0.05, max_share=0.5)
    assert not untested.removed and untested.reason == "not tested: no blind answer (4 failed)"


def test_rotations_move_the_answer_and_replies_are_scored():
    assert rotate(["w", "x", "y", "z"], 0, 1) == (["z", "w", "x", "y"], "B")
    jobs = blind_jobs([q("q1", answer="C")], ["m1", "m2"])
    assert len(jobs) == 8 and [j.answer for j in jobs[:4]] == ["C", "D", "A", "B"]
    assert all(j.options[ord(j.answer) - 65] == "option 2 of q1" for j in jobs)
    assert "Option A: option 2 of q1" in jobs[2].prompt
    job = jobs[0]
    assert score_reply(job, "C", None)["correct"] and not score_reply(job, "B", None)["correct"]
    assert score_reply(job, "I cannot tell without the video.", None)["status"] == "unparsed"
    assert score_reply(job, None, "HTTP 500")["status"] == "failed"
    rows = [{"question_id": "q1", "task": "T", "options": list(job.options), **score_reply(job, t, e)}
            for t, e in [("C", None), ("C", None), ("no idea", None), (None, "timeout")]]
    (v,) = leakage_verdicts(rows, alpha=0.05, max_share=0.9)
    assert (v.n_correct, v.n_answers, v.n_failed) == (2, 3, 1)
    assert v.p_value == pytest.approx(binomtest(2, 3, 0.25, alternative="greater").pvalue)
    assert guessable([v]) == [v]

"""The pure parts of the synthesis: polarity word lists, the leak check, option checks, weighted ranking."""

from __future__ import annotations

import pytest

from hvbench_assets.core.synthesis.checks import check_options, leak_check
from hvbench_assets.core.synthesis.ranking import BadReply, parse_scores, rank, rerank_steps
from hvbench_assets.core.synthesis.words import NEGATIVE, NEUTRAL, POSITIVE, emotion_words, polarity, stem
from hvbench_assets.core.tasks.catalog import TASK_BY_ABBREV, TASKS


def answer_form(abbrev, numbers=()):
    """The form of a descriptive family's options (its recipe's), None for the others."""
    recipe = TASK_BY_ABBREV[abbrev].synthesis
    return recipe.form(numbers) if recipe else None


@pytest.mark.parametrize("text, expected", [
    ("She looks happy and relaxed while she talks.", "positive"),
    ("He seems calm and focused.", "neutral"),
    ("The girl looks sad, then angry.", "negative"),
    ("She is not happy about the result.", "negative"),
    ("He is not angry, just tired.", "positive"),
    ("Happy at first, then sad.", "neutral"),  # a tie counts as neutral
    ("The man is frustrated and anxious but proud.", "negative"),
    ("No emotion words here at all.", "neutral"),
])
def test_polarity_from_the_truth_emotion_words(text, expected):
    assert polarity(text) == expected


def test_word_lists_are_disjoint_and_negation_is_kept():
    assert not (POSITIVE & NEGATIVE) and not (POSITIVE & NEUTRAL) and not (NEGATIVE & NEUTRAL)
    assert emotion_words("She is not happy, later surprised.") == ["not happy", "surprised"]


def test_leak_check_emotion_words_in_the_question():
    leak = leak_check("Why does the woman in the red shirt look happy?", "She looks happy and excited.", "emotion")
    assert leak.leaked and leak.found == ["happy"] and leak.key_words == ["excit", "happy"]
    ok = leak_check("Which emotion does the woman in the red shirt show?", "She looks happy.", "emotion")
    assert not ok.leaked and ok.key_words == ["happy"]


def test_leak_check_content_words_ignore_the_person_description():
    person = "a woman in a red shirt with glasses"
    q = "What does the woman in the red shirt do, in order?"
    assert not leak_check(q, "The woman in the red shirt waves, then sits down.", "content", person=person).leaked
    leak = leak_check("In what order does she wave and sit down?", "She waves, then sits down.", "content", person=person)
    assert leak.leaked and set(leak.found) == {"wav", "sit"}
    assert stem("waving") == stem("waves") == stem("wave") and stem("sitting") == stem("sits")
    framing = leak_check("What actions does the woman perform, in order?", "She performs a wave, then sits down.",
                         "content", person=person)
    assert not framing.leaked and framing.key_words == ["sit", "wav"]
    # a causal question names one side by design: only more than half of the answer's words is a leak
    cause = leak_check("Why does the man raise his hand?", "Because the teacher asked a question.", "content", 0.5)
    assert not cause.leaked


def test_option_checks_report_duplicates_substrings_and_length_ratios():
    truth = "The person waves, then sits down and drinks water."
    ok = check_options(truth, ["The person claps, then sits down and drinks juice.",
                               "The person waves, then stands up and eats bread.",
                               "The person sits down, then waves and drinks coffee."])
    assert ok.ok and ok.problems == [] and all(0.9 < r < 1.1 for r in ok.length_ratios)
    dup = check_options(truth, ["The person claps.", "the person claps", "The person waves, then sits down."])
    assert not dup.ok
    assert any("same" in p for p in dup.problems)
    assert any("part of option 1" in p for p in dup.problems)  # 'the person waves then sits down' is in the truth
    assert any("length" in p for p in dup.problems) and dup.length_ratios[0] == round(17 / len(truth), 3)
    assert not check_options(truth, ["a", "b"]).ok  # three options are not four


def test_weighted_ranking_lets_weights_change_the_winner():
    scores = {"strong": {1: 5, 2: 6, 3: 2, 4: 9}, "mid": {1: 8, 2: 5, 3: 9, 4: 4}, "weak": {1: 8, 2: 5, 3: 6, 4: 5}}
    equal = rank(scores, {}, 4)
    assert equal.totals == [21, 16, 17, 18] and equal.winner == 0
    weighted = rank(scores, {"strong": 2.0}, 4)
    assert weighted.totals == [26, 22, 19, 27] and weighted.order == [3, 0, 1, 2]
    tie = rank({"a": {1: 5, 2: 5}}, {}, 2)
    assert tie.winner == 0  # ties go to the earlier candidate


def test_rerank_from_stored_score_rows_without_calls():
    rows = [{"step": "score", "status": "ok", "model": "strong", "weight": 2.0, "payload": {"scores": {"1": 5, "2": 9}}},
            {"step": "score", "status": "ok", "model": "weak", "weight": 1.0, "payload": '{"scores": {"1": 9, "2": 2}}'},
            {"step": "score", "status": "failed", "model": "broken", "weight": 1.0, "payload": {"raw": "?"}}]
    assert rerank_steps(rows).winner == 1 and rerank_steps(rows).totals == [19, 20]
    assert rerank_steps(rows, {"strong": 1.0}).winner == 0


@pytest.mark.parametrize("text", ['{"scores": {"1": 4}}', '{"scores": {"1": 4, "2": 11}}', "4, 5",
                                  '{"scores": {"1": true, "2": 3}}', '{"scores": {"one": 1, "2": 3}}'])
def test_score_replies_are_parsed_strictly(text):
    with pytest.raises(BadReply):
        parse_scores(text, 2)


def test_score_reply_forms():
    assert parse_scores('```json\n{"scores": {"1": 7, "2": 3.5}}\n```', 2) == {1: 7.0, 2: 3.5}
    assert parse_scores('{"scores": [{"answer": 1, "score": 2}, {"answer": 2, "score": 8}]}', 2) == {1: 2.0, 2: 8.0}


def test_a_prompt_change_marks_only_its_task_stale():
    import dataclasses

    from hvbench_assets.core.synthesis.prompts import SCORE

    prompts = {t.abbrev: {p.fingerprint for p in t.prompts} for t in TASKS if t.descriptive}
    for a in prompts:
        for b in prompts:
            if a != b:
                assert prompts[a] & prompts[b] == {SCORE.fingerprint}  # only the shared score sheet
    er = TASK_BY_ABBREV["ER"]
    edited = dataclasses.replace(er.synthesis.perturb, user=er.synthesis.perturb.user + " ")
    changed = dataclasses.replace(er, synthesis=dataclasses.replace(er.synthesis, perturb=edited))
    assert changed.fingerprint() != er.fingerprint()
    assert all(f.prompts == f.synthesis.prompts for f in TASKS if f.descriptive)


def test_distractors_must_have_the_answer_form_of_h2t_and_eic():
    h2t = answer_form("H2T")
    truth = "The person is the man on the right in a white shirt."
    bad = check_options(truth, ["The person is the man on the left in a blue shirt.",
                                "A man on the right wearing a black shirt and tie.",
                                "The person is the woman on the right in a white coat."], form=h2t)
    assert not bad.ok and bad.problems == ["distractor 2 is not in the answer form 'The person is ...': "
                                           "'A man on the right wearing a black shirt and tie.'"]
    eic = answer_form("EIC", (1, 2, 3, 4))
    assert check_options("2-happy", ["2-sad", "3-happy", "4-angry"], (0.3, 3.0), form=eic).ok
    bad = check_options("2-happy", ["5-sad", "3 happy", "B-angry"], (0.3, 3.0), form=eic)
    assert [p.split(":")[0] for p in bad.problems] == [f"distractor {i} is not in the answer form number-emotion "
                                                       "(1/2/3/4-emotion)" for i in (1, 2, 3)]
    assert check_options("2-happy", ["2-sad", "3-tall", "4-angry"], (0.3, 3.0), form=eic).problems == \
        ["distractor 2 names 'tall', not an emotion of the taxonomy: '3-tall'"]
    assert answer_form("AST") is None


def test_min_answerers_from_the_registry_file_and_environment():
    from hvbench_assets.core.mllm import parse_registry

    assert parse_registry({}, environ={}).min_answerers == 3
    assert parse_registry({"min_answerers": 2}, environ={}).min_answerers == 2
    from hvbench_assets.settings_table import registry_settings

    four = registry_settings({"HVBENCH_MIN_ANSWERERS": "4"})
    assert parse_registry({"min_answerers": 2}, environ={}, **four).min_answerers == 4
    with pytest.raises(ValueError, match="HVBENCH_MIN_ANSWERERS"):
        parse_registry({}, environ={}, **registry_settings({"HVBENCH_MIN_ANSWERERS": "three"}))


def test_score_list_in_candidate_order_and_eic_answer_forms():
    def parse_answer(abbrev, text, numbers):
        return answer_form(abbrev, numbers).answer(text)

    assert parse_scores('{"scores": [7, 3]}', 2) == {1: 7.0, 2: 3.0}
    with pytest.raises(BadReply):
        parse_scores('{"scores": [7, 3, 1]}', 2)
    numbers = (1, 2, 3)
    assert [parse_answer("EIC", t, numbers) for t in ("2-Happy", "Person 3: angry", "1, surprised", "b - sad. 3-sad")] \
        == ["2-happy", "3-angry", "1-surprised", "3-sad"]
    for reply in ("4-happy", "B-happy"):  # 4 is not offered; a letter is no person
        with pytest.raises(BadReply):
            parse_answer("EIC", reply, numbers)


def test_every_option_of_the_answers_kind_per_family():
    from hvbench_assets.core.synthesis.forms import actions, form_problems

    er = answer_form("ER")
    truth = "The person looks happy and relaxed."
    # the exported question: one emotion, three appearance descriptions
    appearance = ["The person wears a red shirt and glasses.", "A woman with long dark hair sits indoors.",
                  "The man in the blue coat stands on the left."]
    assert [p.split(":")[0] for p in form_problems(er, truth, appearance)] == \
        [f"distractor {i} names no emotion of the taxonomy" for i in (1, 2, 3)]
    same = form_problems(er, truth, ["The person seems relaxed and happy.", "The person looks sad.", "She is angry."])
    assert same == ["options 1 and 2 name the same emotions ['happy', 'relaxed']"]
    assert form_problems(er, "The person is wearing a hat.", ["The person looks sad.", "Angry.", "Calm."]) == \
        ["the answer names no emotion of the taxonomy: 'The person is wearing a hat.'"]
    eta = answer_form("ETA")
    seq = "The person is calm at first, then surprised, then happy."
    assert form_problems(eta, seq, ["Calm, then happy, then surprised.", "Calm, then sad.", "Angry, then calm."]) == []
    assert form_problems(eta, seq, ["First calm, then surprised, and finally happy.", "Calm, then sad.",
                                    "Angry, then calm."]) == \
        ["options 1 and 2 name the same emotion sequence ('calm', 'surprised', 'happy')"]
    bta = answer_form("BTA")
    assert actions("The person waves, then sits down and drinks water.") == \
        ["The person waves", "sits down", "drinks water."]
    assert form_problems(bta, "The person waves, then sits down.", ["The person claps, then stands up.",
                                                                    "The person wears a red shirt.",
                                                                    "The person sits down, then waves."]) == \
        ["distractor 2 is not an action sequence (1 action; at least 2 in order): 'The person wears a red shirt.'"]
    bca = answer_form("BCA")
    cause = "The person picks up the phone because it rings."
    assert form_problems(bca, cause, ["The person drops the phone because it buzzes.",
                                      "Why does the person pick up the phone?",
                                      "The person waves at a friend across the room."]) == \
        ["distractor 2 is a question, not a statement: 'Why does the person pick up the phone?'",
         "distractor 3 is one event, the answer cause and effect: 'The person waves at a friend across the room.'"]
    h2t = answer_form("H2T")
    assert form_problems(h2t, "The person is on the left in red.", ["The person is on the right in blue.",
                                                                    "The person is in the middle, waving.",
                                                                    "She looks happy."])[0].startswith(
        "distractor 3 is not in the answer form 'The person is ...'")

"""Option extraction on real answer styles; unparsed is a verdict, never a guess."""

import pytest

from hvbench_assets.core.scoring.extraction import extract_option, extract_yesno
from hvbench_assets.testkit.reply_styles import EMOTIONS, PARSED, UNPARSED

COUNTS = [("A", "3"), ("B", "13"), ("C", "5"), ("D", "6")]


@pytest.mark.parametrize("reply,letter,method", PARSED)
def test_parsed_styles(reply, letter, method):
    got = extract_option(reply, EMOTIONS)
    assert (got.letter, got.status, got.method) == (letter, "parsed", method)




@pytest.mark.parametrize("reply,why", UNPARSED)
def test_unparsed_styles(reply, why):
    got = extract_option(reply, EMOTIONS)
    assert (got.letter, got.status, got.method) == (None, "unparsed", why)


@pytest.mark.parametrize("reply,letter", [("There are 13 people.", "B"), ("3", "A"), ("I count 5 persons", "C"),
                                          ("6 people, option D", "D"), ("13", "B")])
def test_number_options_prefer_the_longest_match(reply, letter):
    assert extract_option(reply, COUNTS).letter == letter


def test_deterministic():
    replies = [r for r, _, _ in PARSED] + [r for r, _ in UNPARSED]
    first = [extract_option(r, EMOTIONS) for r in replies]
    assert first == [extract_option(r, EMOTIONS) for r in replies]


def test_option_texts_that_start_with_letters():
    # EIC options pair a person's box letter with an emotion; the reply quoting one is that option
    eic = [("A", "B-angry"), ("B", "A-happy"), ("C", "C-sad"), ("D", "A-neutral")]
    assert extract_option("B-angry", eic).letter == "A"
    assert extract_option("A-happy.", eic).letter == "B"
    assert extract_option("D", eic).letter == "D"  # a bare letter is the option letter we asked for
    assert extract_option("The answer is C.", eic).letter == "C"


def test_person_numbers_are_never_read_as_option_letters():
    # numbered questions (ASD, AVSM, T2H, EIC) name people by the number on their box: a reply naming the person
    # is that option; a bare number names no option (it is not the option at that position)
    asd = [("A", "There is no active speaker in the video."), ("B", "Person 2"),
           ("C", "There is more than one active speaker in the video."), ("D", "Person 1")]
    assert extract_option("Person 2", asd).letter == "B"
    assert extract_option("The answer is Person 1.", asd).letter == "D"
    assert extract_option("D", asd).letter == "D"
    assert [extract_option(r, asd).status for r in ("1", "2", "4")] == ["unparsed"] * 3
    eic = [("A", "2-happy"), ("B", "3-sad"), ("C", "1-angry"), ("D", "4-happy")]
    assert extract_option("3-sad", eic).letter == "B" and extract_option("C", eic).letter == "C"
    assert extract_option("3", eic).status == "unparsed"


# -- yes/no items (core/benchmark/yesno.py): A = yes, B = no ----------------------------------------------------
YESNO_PARSED = [
    ("Yes", "A", "leading_word"), ("yes.", "A", "leading_word"), ("**No**", "B", "leading_word"),
    ("NO!", "B", "leading_word"), ("  Yes, person 2 is the one speaking.", "A", "leading_word"),
    ("No - the woman looks calm, not angry.", "B", "leading_word"), ("Answer: no", "B", "leading_word"),
    ("The answer is: Yes", "A", "leading_word"), ("Final answer: TRUE", "A", "leading_word"),
    ("false.", "B", "leading_word"), ("(no)", "B", "leading_word"), ('"Yes"', "A", "leading_word"),
    ("I think no, because nobody speaks.", "B", "leading_word"), ("<think>maybe no</think>Yes", "A", "leading_word"),
    ("<answer>no</answer>", "B", "answer_phrase"), ("\\boxed{yes}", "A", "answer_phrase"),
    ("是的", "A", "leading_word"), ("不是", "B", "leading_word"), ("答案：否", "B", "leading_word"),
    ("No. I cannot be fully sure, but she does not smile.", "B", "leading_word"),
]
YESNO_UNPARSED = [
    ("", "empty"), ("   ", "empty"), ("Yes or no?", "ambiguous"), ("yes/no", "ambiguous"), ("Maybe.", "no_match"),
    ("Yesterday the man was happy.", "no_match"), ("Nobody is speaking.", "no_match"), ("A", "no_match"),
    ("I'm sorry, I can't view videos.", "refusal"), ("Sorry, no video was provided.", "refusal"),
    ("It cannot be determined from the clip.", "refusal"), ("The person seems happy.", "no_match"),
]


@pytest.mark.parametrize("reply,letter,method", YESNO_PARSED)
def test_yesno_replies(reply, letter, method):
    got = extract_yesno(reply)
    assert (got.letter, got.status, got.method) == (letter, "parsed", method)


@pytest.mark.parametrize("reply,why", YESNO_UNPARSED)
def test_yesno_unparsed_replies_are_never_guessed(reply, why):
    got = extract_yesno(reply)
    assert (got.letter, got.status, got.method) == (None, "unparsed", why)


def test_yesno_reads_the_letters_of_the_items_options():
    assert extract_yesno("No.", [("A", "no"), ("B", "yes")]).letter == "A"

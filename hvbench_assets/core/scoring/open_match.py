"""Deterministic grading of open-ended answers against a structured truth: right, wrong or ungradable.

The truth's kind comes from the task catalog (`Task.answer_kind`); its value is read from the right option's text,
which the task rules write in fixed forms ("3", "At 5 s", "From 3 s to 7 s", "From second 4", "Person 2",
"2-happy", an attitude, emotion words). A reply is graded only when it commits to one reading of that kind:

    count           the one number the reply names (digits or a number word) equals the count
    time            every second the reply names is within TIME_TOLERANCE_S of the truth ("ongoing": the reply
                    says it is already happening); seconds both in and out of it: ungradable
    time_span       the reply names exactly two seconds, each within TIME_TOLERANCE_S of the truth's ends
    person          the one person number the reply names equals the truth's
    person_emotion  the person number and the emotion both match (either clearly wrong: wrong)
    emotion         the reply's emotions (synonyms folded, negated ones dropped) equal the truth's; none shared: wrong;
                    some shared: ungradable
    emotion_sequence the reply's emotions in order (repeats folded) equal the truth's sequence
    attitude        the one attitude the reply names (synonyms folded) equals the truth's
    text            always ungradable: a sentence is left to the judge (core/scoring/open_judge.py)

No answer of the kind (a refusal, several different numbers, no emotion word) is `ungradable`, never a guess.
This module imports only the emotion vocabulary (core/synthesis/words.py), so the lmms-eval export can ship a copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

try:  # the lmms-eval export ships words.py beside a copy of this file as hvbench_words.py
    from hvbench_assets.core.synthesis.words import EMOTIONS, NEGATIONS
except ImportError:  # pragma: no cover - only in the lmms-eval task folder
    from hvbench_words import EMOTIONS, NEGATIONS  # type: ignore[no-redef]

OPEN_MATCH_VERSION = "open-match-v2"  # v2: a count reply naming a time is not a count
RIGHT, WRONG, UNGRADABLE = "right", "wrong", "ungradable"
TIME_TOLERANCE_S = 1.0  # whole-second truths; a reply may round the other way
ONGOING = "ongoing"

# Synonyms, the one list: a word of a group counts as the group's first word. Emotion words of the taxonomy
# (core/synthesis/words.py) outside every group count as themselves.
EMOTION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "happy": ("happiness", "joy", "joyful", "joyous", "glad", "cheerful", "delighted", "delight", "pleased",
              "pleasure", "content", "contented", "smiling", "laughing", "amused", "amusement", "elated"),
    "excited": ("excitement", "enthusiastic", "eager", "thrilled"),
    "sad": ("sadness", "unhappy", "sorrow", "sorrowful", "grief", "grieving", "gloomy", "miserable", "depressed",
            "upset", "hurt"),
    "angry": ("anger", "annoyed", "annoyance", "irritated", "irritation", "frustrated", "frustration", "furious",
              "rage", "resentful", "hostile", "mad"),
    "afraid": ("fear", "fearful", "scared", "frightened", "terrified"),
    "anxious": ("anxiety", "nervous", "worried", "worry", "tense", "stressed", "uneasy", "distressed", "distress"),
    "disgusted": ("disgust", "contempt", "contemptuous", "scornful"),
    "surprised": ("surprise", "surprising", "astonished", "amazed", "shocked"),
    "calm": ("calmness", "composed", "serene", "relaxed"),
    "neutral": ("indifferent", "impassive", "expressionless", "blank"),
    "thoughtful": ("pensive", "contemplative", "focused", "concentrated", "attentive", "serious"),
    "embarrassed": ("embarrassment", "ashamed", "shame"),
    "proud": ("pride",),
    "bored": ("boredom",),
    "confused": ("confusion",),
}
ATTITUDE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "positive": ("favourable", "favorable", "approving", "supportive", "agreeable"),
    "negative": ("unfavourable", "unfavorable", "disapproving", "critical", "opposed"),
    "neutral": ("impartial",),  # and "neither positive nor negative" (attitudes)
    "indeterminate": ("cannot be determined", "can't be determined", "undetermined", "unclear", "cannot tell",
                      "can't tell", "not sure", "uncertain"),
}
_CANON = {w: head for head, group in EMOTION_SYNONYMS.items() for w in (head, *group)}
NUMBER_WORDS = {w: k for k, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                           "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
_WORD = re.compile(r"[a-z][a-z'-]*")
_NUMBER = re.compile(r"(?<![\d.])(\d+):(\d{2})(?!\d)|(?<![\d.:])(\d+(?:\.\d+)?)(?![\d:])|\b(" + "|".join(NUMBER_WORDS)
                     + r")\b", re.IGNORECASE)
_PERSON = re.compile(r"(?:person|people|number|no\.|box|speaker|#)\s*#?\s*(\d+|" + "|".join(NUMBER_WORDS) + r")\b",
                     re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|no|never|isn't|wasn't)\s+(?:\w+\s+)?$")
_TIME_WORDS = re.compile(r"\bseconds?\b|\bsecs?\b|\bminutes?\b|\d\s*s\b|\d+:\d{2}", re.IGNORECASE)
_ONGOING_WORDS = re.compile(r"\b(?:ongoing|already|throughout|whole (?:video|clip)|entire (?:video|clip)|"
                            r"from the (?:very )?(?:start|beginning)|before the (?:video|clip) (?:starts|begins))\b",
                            re.IGNORECASE)
_TRUTH = {
    "count": re.compile(r"^\s*(\d+)\s*(?:people|persons)?\s*\.?\s*$", re.IGNORECASE),
    "time": re.compile(r"^\s*(?:at|from)?\s*(?:second)?\s*(\d+(?:\.\d+)?)\s*(?:s|sec|seconds?)?\s*\.?\s*$", re.IGNORECASE),
    "time_span": re.compile(r"^\s*(?:from)?\s*(\d+(?:\.\d+)?)\s*(?:s|sec|seconds?)?\s*(?:to|-|–|until)\s*"
                            r"(\d+(?:\.\d+)?)\s*(?:s|sec|seconds?)?\s*\.?\s*$", re.IGNORECASE),
    "person": re.compile(r"^\s*(?:person|number|no\.)?\s*#?\s*(\d+)\s*\.?\s*$", re.IGNORECASE),
    "person_emotion": re.compile(r"^\s*(?:person\s*)?(\d+)\s*-\s*([a-z]+)\s*$", re.IGNORECASE),
}


@dataclass(frozen=True)
class Grade:
    verdict: str  # right | wrong | ungradable
    reason: str  # what was read, in words ("named 4, truth 3")


def parse_truth(kind: str, text: str) -> Any:
    """The structured value of a right option's text of `kind`, or None when the text is not in the kind's form
    (then the item is graded as text). time: seconds or "ongoing"; time_span: [start, end]; person_emotion:
    [number, emotion]; emotion: sorted emotions; emotion_sequence: emotions in order; attitude: its word."""
    text = text or ""
    if kind in ("count", "person"):
        m = _TRUTH[kind].match(text)
        return int(m.group(1)) if m else None
    if kind == "time":
        if _ONGOING_WORDS.search(text):
            return ONGOING
        m = _TRUTH["time"].match(text)
        return _num(m.group(1)) if m else None
    if kind == "time_span":
        m = _TRUTH["time_span"].match(text)
        return [_num(m.group(1)), _num(m.group(2))] if m else None
    if kind == "person_emotion":
        m = _TRUTH["person_emotion"].match(text)
        emotion = m and emotions(m.group(2))
        return [int(m.group(1)), emotion[0]] if emotion else None
    if kind == "emotion":
        return sorted(set(emotions(text))) or None
    if kind == "emotion_sequence":
        return emotion_sequence(text) or None
    if kind == "attitude":
        found = attitudes(text)
        return found[0] if len(found) == 1 else None
    return None


def is_open_reply(row: Any) -> bool:
    """An eval_responses row of an open item that got a reply (the report's grading table and the grade queue)."""
    return bool(row.get("grade")) and row.get("status") != "failed" and not row.get("rotation")


def grade(kind: str, truth: Any, reply: str | None) -> Grade:
    """Grade `reply` against `truth` (parse_truth's value) of `kind`."""
    reply = (reply or "").strip()
    if truth is None or kind == "text":
        return Grade(UNGRADABLE, "no structured truth")
    if not reply:
        return Grade(UNGRADABLE, "empty reply")
    return _GRADERS[kind](truth, reply)


# -- reading a reply ---------------------------------------------------------------------------
def _num(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def numbers(text: str) -> list[float]:
    """Numbers in order: digits, "m:ss" as seconds, number words up to twenty."""
    out = []
    for m in _NUMBER.finditer(text):
        if m.group(1):
            out.append(float(int(m.group(1)) * 60 + int(m.group(2))))
        elif m.group(3):
            out.append(float(m.group(3)))
        else:
            out.append(float(NUMBER_WORDS[m.group(4).lower()]))
    return out


def person_numbers(text: str) -> set[int]:
    """Person numbers: after "person", "number", "#", "box"..., and bare digits ("Person 2 or 3" names two; a bare
    "one" is a pronoun more often than a number)."""
    named = {int(n) if n.isdigit() else NUMBER_WORDS[n.lower()] for n in _PERSON.findall(text)}
    return named | {int(n) for n in re.findall(r"(?<![\d.:])\d+(?![\d:.]\d)", text)}


def emotions(text: str) -> list[str]:
    """Emotion words in order, folded to their group's first word; a word after a negation ("not happy") is dropped."""
    ws = _WORD.findall(text.lower())
    out = []
    for i, w in enumerate(ws):
        if (w in EMOTIONS or w in _CANON) and not any(x in NEGATIONS for x in ws[max(0, i - 2):i]):
            out.append(_CANON.get(w, w))
    return out


def emotion_sequence(text: str) -> list[str]:
    seq: list[str] = []
    for e in emotions(text):
        if not seq or seq[-1] != e:
            seq.append(e)
    return seq


def attitudes(text: str) -> list[str]:
    """Attitudes the reply names, folded to their group's first word; a negated one ("not negative") is dropped."""
    low = " ".join(text.lower().split())
    found = []
    if "neither positive nor negative" in low:
        found.append("neutral")
        low = low.replace("neither positive nor negative", " ")
    for head, group in ATTITUDE_SYNONYMS.items():
        for w in (head, *group):
            m = re.search(rf"\b{re.escape(w)}\b", low)
            if m and not _NEGATED.search(low[:m.start()]):
                found.append(head)
                break
    return list(dict.fromkeys(found))


# -- graders per kind --------------------------------------------------------------------------
def _one(found: set, truth: Any, what: str) -> Grade:
    if not found:
        return Grade(UNGRADABLE, f"names no {what}")
    if len(found) > 1:
        return Grade(UNGRADABLE, f"names several {what}s: {', '.join(sorted(map(_fmt, found)))}")
    value = next(iter(found))
    return Grade(RIGHT if value == truth else WRONG, f"named {_fmt(value)}, truth {_fmt(truth)}")


def _fmt(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _count(truth: int, reply: str) -> Grade:
    if _TIME_WORDS.search(reply):  # "From second 3" names a time; a count that happens to match is no answer
        return Grade(UNGRADABLE, "names a time, not a count")
    return _one(set(numbers(reply)), truth, "number")


def _time(truth: Any, reply: str) -> Grade:
    said = numbers(reply)
    ongoing = bool(_ONGOING_WORDS.search(reply))
    if truth == ONGOING:
        if ongoing:
            return Grade(RIGHT, "says the action is already going on")
        return Grade(WRONG, f"names second {_fmt(said[0])}, truth: ongoing") if said else Grade(UNGRADABLE, "names no time")
    if not said:
        return Grade(WRONG, "says ongoing, truth a second") if ongoing else Grade(UNGRADABLE, "names no time")
    near = [abs(t - truth) <= TIME_TOLERANCE_S for t in said]
    if all(near):
        return Grade(RIGHT, f"named {', '.join(map(_fmt, said))} s, truth {_fmt(truth)} s (±{_fmt(TIME_TOLERANCE_S)})")
    if not any(near):
        return Grade(WRONG, f"named {', '.join(map(_fmt, said))} s, truth {_fmt(truth)} s (±{_fmt(TIME_TOLERANCE_S)})")
    return Grade(UNGRADABLE, f"names seconds near and far from the truth: {', '.join(map(_fmt, said))}")


def _span(truth: list, reply: str) -> Grade:
    said = numbers(reply)
    if len(said) != 2:
        return Grade(UNGRADABLE, f"names {len(said)} second(s), not a start and an end")
    ok = abs(said[0] - truth[0]) <= TIME_TOLERANCE_S and abs(said[1] - truth[1]) <= TIME_TOLERANCE_S
    return Grade(RIGHT if ok else WRONG, f"named {_fmt(said[0])}-{_fmt(said[1])} s, truth {_fmt(truth[0])}-"
                                          f"{_fmt(truth[1])} s (±{_fmt(TIME_TOLERANCE_S)} each end)")


def _person(truth: int, reply: str) -> Grade:
    return _one(person_numbers(reply), truth, "person number")


def _person_emotion(truth: list, reply: str) -> Grade:
    person, emotion = _person(truth[0], reply), _one(set(emotions(reply)), truth[1], "emotion")
    if WRONG in (person.verdict, emotion.verdict):
        return Grade(WRONG, f"{person.reason}; {emotion.reason}")
    if person.verdict == emotion.verdict == RIGHT:
        return Grade(RIGHT, f"{person.reason}; {emotion.reason}")
    return Grade(UNGRADABLE, f"{person.reason}; {emotion.reason}")


def _emotion(truth: list, reply: str) -> Grade:
    said = set(emotions(reply))
    if not said:
        return Grade(UNGRADABLE, "names no emotion")
    reason = f"named {sorted(said)}, truth {truth}"
    if said == set(truth):
        return Grade(RIGHT, reason)
    return Grade(WRONG, reason) if not said & set(truth) else Grade(UNGRADABLE, "partly the truth's emotions: " + reason)


def _sequence(truth: list, reply: str) -> Grade:
    said = emotion_sequence(reply)
    if not said:
        return Grade(UNGRADABLE, "names no emotion")
    return Grade(RIGHT if said == truth else WRONG, f"named {' > '.join(said)}, truth {' > '.join(truth)}")


def _attitude(truth: str, reply: str) -> Grade:
    return _one(set(attitudes(reply)), truth, "attitude")


_GRADERS = {"count": _count, "time": _time, "time_span": _span, "person": _person, "person_emotion": _person_emotion,
            "emotion": _emotion, "emotion_sequence": _sequence, "attitude": _attitude}

"""Emotion words and their polarity, and the content words of a sentence (for the answer-leak check).

ER questions are balanced positive : neutral : negative = 1 : 1 : 2 when the pool is assembled, so each ER
question stores the polarity of its truth, read from the emotion words it contains (lists below).
"""

from __future__ import annotations

import hashlib
import re

POSITIVE = frozenset("""
happy happiness joy joyful joyous glad cheerful delighted delight pleased pleasure content contented
amused amusement excited excitement enthusiastic eager elated thrilled proud pride grateful relieved
relief hopeful optimistic affectionate loving love satisfied satisfaction playful smiling laughing
confident friendly warm tender admiring admiration
""".split())

NEGATIVE = frozenset("""
sad sadness unhappy sorrow sorrowful grief grieving gloomy miserable depressed upset hurt angry anger
annoyed annoyance irritated irritation frustrated frustration furious rage resentful hostile mad
afraid fear fearful scared frightened terrified anxious anxiety nervous worried worry tense stressed
uneasy disgust disgusted contempt contemptuous scornful disappointed disappointment ashamed shame
embarrassed embarrassment guilty lonely bored boredom jealous envious distressed distress uncomfortable
confused confusion bitter displeased displeasure disapproving sceptical skeptical suspicious helpless
""".split())

NEUTRAL = frozenset("""
neutral calm calmness composed serene relaxed indifferent impassive expressionless blank attentive
focused concentrated thoughtful pensive contemplative serious curious surprised surprise surprising
astonished amazed
""".split())

EMOTIONS = POSITIVE | NEGATIVE | NEUTRAL
NEGATIONS = frozenset({"not", "no", "never", "without", "hardly", "barely", "isn't", "doesn't", "don't", "nor"})

STOPWORDS = frozenset("""
a an the and or but if then than so as of in on at to from by for with without into onto over under about
after before during while until up down out off again further once here there when where why how what which
who whom whose this that these those is are was were be been being am do does did doing have has had having
he she it they them him her his hers its their theirs we us our you your i me my mine very more most some any
all each both few other such only own same too can will just should would could may might must also still
person people man woman men women boy girl video clip frame frames one two three first second then later
appears seems looks look looking shows showing display displays expresses expression expressions face
action actions perform performs performed performing order sequence happen happens happened next finally
lead leads led result results cause causes caused because why reason
""".split())  # the last two lines frame questions about actions and causes: they name no answer

_WORD = re.compile(r"[a-z][a-z'-]*")


def words(text: str) -> list[str]:
    return _WORD.findall((text or "").lower())


def stem(word: str) -> str:
    """A crude stem so 'waving', 'waves' and 'wave' meet: enough for a leak test, not linguistics."""
    w = word.strip("'-")
    for suffix in ("ingly", "edly", "ness", "ing", "ies", "ied", "ed", "ly", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # sitting -> sit
    return w


def emotion_words(text: str) -> list[str]:
    """The emotion words of `text` in order, with a preceding negation kept ('not happy')."""
    ws = words(text)
    out = []
    for i, w in enumerate(ws):
        if w in EMOTIONS:
            negated = any(x in NEGATIONS for x in ws[max(0, i - 2) : i])
            out.append(f"not {w}" if negated else w)
    return out


def polarity(text: str) -> str:
    """positive | neutral | negative from the emotion words: more negative than positive words is negative,
    more positive is positive, anything else (none, only neutral words, a tie) is neutral. A negated word
    counts on the other side ('not happy' is negative), except a negated neutral word, which stays neutral."""
    pos = neg = 0
    for e in emotion_words(text):
        negated, w = e.startswith("not "), e.split()[-1]
        if w in POSITIVE:
            neg, pos = (neg + 1, pos) if negated else (neg, pos + 1)
        elif w in NEGATIVE:
            pos, neg = (pos + 1, neg) if negated else (pos, neg + 1)
    if neg > pos:
        return "negative"
    if pos > neg:
        return "positive"
    return "neutral"


def content_words(text: str, exclude: str = "") -> set[str]:
    """Stems of the words that carry meaning (no stop words, nothing in `exclude`)."""
    skip = {stem(w) for w in words(exclude)}
    return {stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 2} - skip


def lists_fingerprint() -> str:
    """The word lists as a short hash: part of the descriptive tasks' rule version (leak check, polarity)."""
    blob = "|".join(" ".join(sorted(x)) for x in (POSITIVE, NEGATIVE, NEUTRAL, NEGATIONS, STOPWORDS))
    return hashlib.sha256(blob.encode()).hexdigest()[:8]

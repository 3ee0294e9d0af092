"""Deterministic option extraction: map a model's free-text reply to one option letter, or to nothing.

Rules run in a fixed order and the first that yields exactly one letter wins: a reply that is just a
letter, a reply that is exactly one option's text, an explicit answer phrase ("the answer is D", "Answer: (B)", "答案是C", \\boxed{A}), a reply
that starts with a lettered option ("B. happy"), then - unless the reply is a refusal - a single
stand-alone letter, then an option's text quoted instead of its letter. Anything else is `unparsed`
(counted wrong and reported); there is never a random pick.

Yes/no items (core/benchmark/yesno.py) are read by `extract_yesno`: a yes/no/true/false word at the start of the
reply, after an optional answer phrase ("Answer: no"), else nothing; a refusal is `unparsed` too.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

PARSED = "parsed"
UNPARSED = "unparsed"


@dataclass(frozen=True)
class Extraction:
    letter: str | None
    status: str  # parsed | unparsed
    method: str  # which rule decided: bare_letter, answer_phrase, leading_letter, lone_letter, option_text,
    #              judge; or why nothing was taken: empty, refusal, ambiguous, no_match

    @property
    def parsed(self) -> bool:
        return self.letter is not None


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MARKUP = re.compile(r"[*_`#]+")
_BOXED = re.compile(r"\\boxed\{\s*\\?(?:text\{)?\s*([A-Za-z])\s*\}?\s*\}")
_TAGGED = re.compile(r"<answer>\s*\(?([A-Za-z])\)?\s*</answer>", re.IGNORECASE)
# A letter token: optional brackets; a lowercase letter only when punctuation or the end follows,
# so the article in "the answer is a man" is not read as option A.
_LETTER = r"[\(\[\{<\"']?\s*(?:([A-Z])|([a-z])(?=\s*(?:[.,;:!?)\]}>\"'。，；]|$)))(?:\s*[\)\]\}>\"'])?(?![A-Za-z0-9])"
_PHRASES = [
    r"(?:final\s+|correct\s+|best\s+|right\s+)?answer[\"']?\s*(?:is|would\s+be|should\s+be|will\s+be|:|=|-)?\s*(?:option\s*|choice\s*|letter\s*)?:?\s*",
    r"(?:correct|best|right)\s+(?:option|choice|letter)\s*(?:is|would\s+be|should\s+be|:)?\s*(?:option\s*)?",
    r"(?:i\s+(?:would\s+|will\s+|'d\s+)?(?:choose|pick|select|go\s+with)|my\s+(?:choice|option|answer)\s+is)\s*(?:option\s*)?:?\s*",
    r"your\s+option\s+is\s*:?\s*",
    r"(?:答案|选项|选择|答)\s*(?:是|为|应该是|应为)?\s*[:：]?\s*(?:选项)?\s*",
    r"选\s*",
]
# phrase words are case-insensitive, the letter is not (see _LETTER)
_PHRASE_RE = [re.compile(f"(?i:{p})" + _LETTER) for p in _PHRASES]
_OPTION_WORD = re.compile(r"(?i:\b(?:option|choice)\s*)" + _LETTER)
_BARE = re.compile(r"^\s*(?i:option\s*|choice\s*)?[\(\[]?\s*([A-Za-z])\s*[\)\]]?\s*[.:。)!]?\s*$")
_LEADING = re.compile(r"^\s*(?:option\s*)?[\(\[]?([A-Z])(?:[\)\]]|\s*[.:：。，,、\-–—]|\s*$)")
_MORE_LETTERS = re.compile(r"\s*(?:,|/|&|\band\b|\bor\b)\s*[\(\[]?[A-Z](?![A-Za-z0-9])")
# words after which a capital "A" is an option letter, not the article ("A or B", "A is right")
_NOT_ARTICLE_NEXT = {"or", "and", "nor", "is", "was", "seems", "looks", "appears", "would", "should",
                     "might", "because", "since", "as", "but", "vs", "versus", "to", "then", "fits", "matches"}
_LEADING_LOWER = re.compile(r"^\s*\(?([a-z])[.)]\s")  # "b) sad", "c. angry"; not "i.e." or "a man"
_LONE = re.compile(r"(?<![A-Za-z0-9'’-])([A-Z])(?![A-Za-z0-9'’-])")
_REFUSAL = re.compile(
    r"\b(?:i\s*(?:'m|am)\s*(?:sorry|unable|not\s+able)|sorry|i\s*(?:can(?:no|')t|cannot|could\s*not|couldn't)"
    r"|unable\s+to|not\s+possible\s+to|impossible\s+to|(?:cannot|can't|can\s+not)\s+(?:be\s+)?determin\w*"
    r"|(?:don't|do\s+not)\s+know"
    r"|none\s+of\s+the\s+(?:options|above|choices)|no\s+(?:video|audio)\s+(?:was|is)\s+provided"
    r"|don't\s+have\s+(?:access|enough)|not\s+enough\s+information|as\s+an\s+ai)\b"
    r"|无法|不能确定|抱歉",
    re.IGNORECASE,
)


def clean_response(text: str) -> str:
    """NFKC (full-width letters and brackets to ASCII), drop reasoning blocks and Markdown emphasis."""
    text = unicodedata.normalize("NFKC", text or "")
    text = _THINK.sub(" ", text)
    if "</think>" in text.lower():  # an unclosed reasoning prefix: keep only what follows it
        text = re.split(r"</think>", text, flags=re.IGNORECASE)[-1]
    return _MARKUP.sub("", text).strip().strip("\"'").strip()


def _letters(matches, valid: Sequence[str]) -> list[str]:
    out = []
    for m in matches:
        letter = (m.group(1) or m.group(2) or "").upper() if m.lastindex and m.lastindex >= 2 else m.group(1).upper()
        if letter in valid and letter not in out:
            out.append(letter)
    return out


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", unicodedata.normalize("NFKC", text).lower()).split())


def _option_text_match(text: str, options: Sequence[tuple[str, str]]) -> tuple[str | None, str]:
    """An option's text instead of its letter: exact, contained (longest option wins when one text
    contains another), or a close fuzzy match with a clear margin over the runner-up."""
    reply = _norm(text)
    if not reply:
        return None, "no_match"
    norm = [(letter, _norm(t)) for letter, t in options]
    exact = [letter for letter, t in norm if t and t == reply]
    if len(exact) == 1:
        return exact[0], "option_text"
    contained = [(letter, t) for letter, t in norm if t and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", reply)]
    # drop an option whose text sits inside another matched option's text ("3" inside "13 people")
    contained = [(letter, t) for letter, t in contained
                 if not any(o != t and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", o) for _, o in contained)]
    if len(contained) == 1:
        return contained[0][0], "option_text"
    if len(contained) > 1:
        return None, "ambiguous"
    ratios = sorted(((difflib.SequenceMatcher(None, reply, t).ratio(), letter) for letter, t in norm if t), reverse=True)
    if ratios and ratios[0][0] >= 0.85 and (len(ratios) == 1 or ratios[0][0] - ratios[1][0] >= 0.1):
        return ratios[0][1], "option_text"
    return None, "no_match"


def extract_option(response: str | None, options: Sequence[tuple[str, str]]) -> Extraction:
    """`options` are (letter, text) pairs in order. Returns the chosen letter or an `unparsed` verdict."""
    valid = [letter for letter, _ in options]
    text = clean_response(response or "")
    if not text:
        return Extraction(None, UNPARSED, "empty")

    m = _BARE.match(text)
    if m:
        got = _letters([m], valid)
        if got:
            return Extraction(got[0], PARSED, "bare_letter")

    # a reply that is exactly one option's text ("2-angry" in EIC, where texts start with person numbers)
    exact = [letter for letter, t in options if _norm(t) and _norm(t) == _norm(text)]
    if len(exact) == 1:
        return Extraction(exact[0], PARSED, "option_text")

    explicit = _letters(list(_BOXED.finditer(text)) + list(_TAGGED.finditer(text)), valid)
    if len(explicit) == 1:
        return Extraction(explicit[0], PARSED, "answer_phrase")
    phrase_matches = [m for rx in _PHRASE_RE for m in rx.finditer(text)]
    phrase_hits = _letters(phrase_matches, valid)
    if len(phrase_hits) == 1:
        if any(_MORE_LETTERS.match(text, m.end()) for m in phrase_matches):
            return Extraction(None, UNPARSED, "ambiguous")  # "the answer is B or C"
        return Extraction(phrase_hits[0], PARSED, "answer_phrase")
    if len(phrase_hits) > 1:
        # "The answer is B, not C" names one letter right after the phrase; several phrases disagreeing do not.
        return Extraction(None, UNPARSED, "ambiguous")

    m = _LEADING.match(text) or _LEADING_LOWER.match(text)
    if m and m.group(1).upper() in valid:
        return Extraction(m.group(1).upper(), PARSED, "leading_letter")

    option_words = _letters(list(_OPTION_WORD.finditer(text)), valid)
    if len(option_words) == 1 and not _REFUSAL.search(text):
        return Extraction(option_words[0], PARSED, "option_word")

    if _REFUSAL.search(text):
        return Extraction(None, UNPARSED, "refusal")

    lone = [x for x in _lone_letters(text) if x in valid]
    if len(set(lone)) == 1:
        return Extraction(lone[0], PARSED, "lone_letter")
    if len(set(lone)) > 1 or len(option_words) > 1:
        return Extraction(None, UNPARSED, "ambiguous")

    letter, method = _option_text_match(text, options)
    if letter:
        return Extraction(letter, PARSED, method)
    return Extraction(None, UNPARSED, method)


_YES_WORDS = {"yes": "yes", "true": "yes", "no": "no", "false": "no", "是": "yes", "否": "no", "不是": "no"}
# the first word, after an optional answer phrase and opening brackets/quotes: "Answer: (yes)", "I think no."
_YESNO_START = re.compile(
    r"^\s*(?:(?:i\s+(?:think|believe|would\s+say)|my\s+answer\s+is|(?:the\s+)?(?:final\s+|correct\s+)?answer"
    r"(?:\s+is)?|答案(?:是|为)?)\s*[:：=\-]?\s*)?[\(\[{<\"'“‘]*\s*(不是|是|否|[A-Za-z]+)", re.IGNORECASE)
_YESNO_TAGGED = re.compile(r"(?:<answer>|\\boxed\{(?:\\text\{)?)\s*([A-Za-z]+)", re.IGNORECASE)


def extract_yesno(response: str | None, options: Sequence[tuple[str, str]] = (("A", "yes"), ("B", "no"))
                  ) -> Extraction:
    """The letter of the "yes" or "no" option (`options`: (letter, text) pairs) the reply starts with: yes / no /
    true / false (any case, punctuation after it), also inside <answer>…</answer> or \\boxed{}. "Yes or no",
    "yesterday", "Nobody", "maybe" and refusals take nothing."""
    by_word = {t.strip().lower(): letter for letter, t in options}
    text = clean_response(response or "")
    if not text:
        return Extraction(None, UNPARSED, "empty")
    for rx, method in ((_YESNO_TAGGED, "answer_phrase"), (_YESNO_START, "leading_word")):
        m = rx.search(text) if rx is _YESNO_TAGGED else rx.match(text)
        word = _YES_WORDS.get(m.group(1).lower()) if m else None
        if word is None:
            continue
        rest = text[m.end():]
        if re.match(r"\s*(?:/|or\b|and\b)", rest, re.IGNORECASE):  # "Yes or no", "yes/no": no answer
            return Extraction(None, UNPARSED, "ambiguous")
        if word in by_word:
            return Extraction(by_word[word], PARSED, method)
    if _REFUSAL.search(text):
        return Extraction(None, UNPARSED, "refusal")
    return Extraction(None, UNPARSED, "no_match")


def _lone_letters(text: str) -> list[str]:
    """Capital letters standing alone, minus the article 'A' and the pronoun 'I' before a lowercase word."""
    out = []
    for m in _LONE.finditer(text):
        after = text[m.end():]
        nxt = re.match(r"\s+([a-z]+)", after)
        if m.group(1) in ("A", "I") and nxt and not (m.group(1) == "A" and nxt.group(1) in _NOT_ARTICLE_NEXT):
            continue
        out.append(m.group(1))
    return out

"""The letter-only prompt (same intent as the paper's evaluation prompt; our own wording), its variants for the
modality arms (core/evaluation/arms.py), the yes/no prompt of yes/no items (core/benchmark/yesno.py) and the open
prompt of open-ended items (core/benchmark/open_ended.py)."""

from __future__ import annotations

from hvbench_assets.core.benchmark.layout import BenchmarkItem
from hvbench_assets.core.benchmark.leakage import BLIND_PROMPT_VERSION, blind_prompt
from hvbench_assets.core.benchmark.open_ended import ANSWER_HINTS, is_open, truth_of
from hvbench_assets.core.benchmark.yesno import is_yesno
from hvbench_assets.core.scoring.extraction import PARSED, UNPARSED, Extraction, extract_option, extract_yesno
from hvbench_assets.core.scoring.open_match import RIGHT, UNGRADABLE, Grade, grade

PROMPT_VERSION = "letter-only-v1"
AUDIO_ONLY_PROMPT_VERSION = "audio-only-v1"
YESNO_PROMPT_VERSION = "yes-no-v1"
OPEN_PROMPT_VERSION = "open-v1"
_INTRO = {"full": "Watch the video and answer the question below",
                "frames": "Watch the video and answer the question below",
                "audio": "Listen to the soundtrack of a video whose pictures you cannot see, and answer the question below",
                "text": "Answer the question below about a video you cannot see"}


def _question_block(item: BenchmarkItem) -> str:
    return (f"Question: {item.question}\n\n"
            + "\n\n".join(f"Option {o.letter}: {o.text}" for o in item.options) + "\n\n"
            "Reply with one letter. Your option:")


def letter_only_prompt(item: BenchmarkItem) -> str:
    return (
        "Watch the video and pick the single best option for the multiple-choice question below. "
        "Reply with the option's letter only.\n\n" + _question_block(item)
    )


def audio_only_prompt(item: BenchmarkItem) -> str:
    return (
        "Listen to the soundtrack of a video whose pictures you cannot see, and pick the single best option for "
        "the multiple-choice question below. Reply with the option's letter only.\n\n" + _question_block(item)
    )


def yesno_prompt(item: BenchmarkItem, arm: str = "full") -> str:
    return f"{_INTRO[arm]} with yes or no.\n\nQuestion: {item.question}\n\nAnswer yes or no. Your answer:"


def open_prompt(item: BenchmarkItem, arm: str = "full") -> str:
    """No options: the answer in the model's words, in the form its kind asks for (so the matcher can grade it)."""
    return (f"{_INTRO[arm]} in your own words.\n\nQuestion: {item.question}\n\n"
            f"{ANSWER_HINTS[truth_of(item)[0]]} Your answer:")


def arm_prompt(item: BenchmarkItem, arm: str) -> tuple[str, str]:
    """(prompt, prompt version) for one arm. Full and frames-only share the video prompt (a model without
    audio input gets the same request in both); text-only is the leakage step's blind prompt, so blind
    answers already cached in model_calls are reused. A yes/no item gets the yes/no prompt in every arm."""
    if is_yesno(item):
        return yesno_prompt(item, arm), YESNO_PROMPT_VERSION
    if is_open(item):
        return open_prompt(item, arm), OPEN_PROMPT_VERSION
    if arm == "audio":
        return audio_only_prompt(item), AUDIO_ONLY_PROMPT_VERSION
    if arm == "text":
        return blind_prompt(item.question, [o.text for o in item.options]), BLIND_PROMPT_VERSION
    return letter_only_prompt(item), PROMPT_VERSION


def match_open(item: BenchmarkItem, text: str) -> Grade:
    """The matcher's grade of a reply to an open item (core/scoring/open_match.py)."""
    kind, truth, _ = truth_of(item)
    return grade(kind, truth, text)


def as_extraction(item: BenchmarkItem, g: Grade, method: str) -> Extraction:
    """An open grade in the runner's terms: right chose the answer, wrong chose nothing, ungradable is unparsed."""
    if g.verdict == UNGRADABLE:
        return Extraction(None, UNPARSED, method)
    return Extraction(item.answer if g.verdict == RIGHT else None, PARSED, method)


def read_reply(item: BenchmarkItem, text: str) -> Extraction:
    """The option a reply chose, by the rules of the item's format (an open item: the matcher's grade)."""
    if is_open(item):
        return as_extraction(item, match_open(item, text), "match")
    options = [(o.letter, o.text) for o in item.options]
    return extract_yesno(text, options) if is_yesno(item) else extract_option(text, options)

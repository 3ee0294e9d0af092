"""Circular evaluation: ask each item once per rotation of its options; the item counts as right only
when every rotation is answered right. Letters are mapped back to the original order for statistics."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from hvbench_assets.core.benchmark.layout import LETTERS, BenchmarkItem, Option
from hvbench_assets.core.benchmark.open_ended import is_open
from hvbench_assets.core.benchmark.yesno import is_yesno


def rotate_item(item: BenchmarkItem, shift: int) -> BenchmarkItem:
    """Option texts move `shift` places down (text of A goes to B when shift=1); letters stay A, B, ..."""
    n = item.n_options
    shift %= n
    texts = [o.text for o in item.options]
    rotated = tuple(Option(LETTERS[i], texts[(i - shift) % n]) for i in range(n))
    answer = LETTERS[(item.letters.index(item.answer) + shift) % n]
    return replace(item, options=rotated, answer=answer)


def original_letter(letter: str | None, shift: int, n_options: int) -> str | None:
    """The letter a choice had before rotation by `shift`."""
    if letter is None:
        return None
    return LETTERS[(LETTERS.index(letter) - shift) % n_options]


def rotations(item: BenchmarkItem, circular: bool) -> list[int]:
    """A yes/no or open item is asked once: its prompt shows no letters to rotate."""
    return list(range(item.n_options)) if circular and not (is_yesno(item) or is_open(item)) else [0]


def circular_correct(rows: Iterable[Mapping]) -> dict[tuple[str, str, str], bool]:
    """(model, task, question_id) -> right under every rotation. Rows carry `rotation` and `correct`;
    an item only counts when all its rotations (0..n_options-1) are present."""
    seen: dict[tuple[str, str, str], dict[int, bool]] = defaultdict(dict)
    n_opts: dict[tuple[str, str, str], int] = {}
    for r in rows:
        key = (r["model"], r["task"], str(r["question_id"]))
        seen[key][int(r["rotation"])] = bool(r["correct"])
        n_opts[key] = int(r["n_options"])
    return {k: all(v.values()) for k, v in seen.items() if len(v) == n_opts[k]}

"""Partition keys from file names: a safe character set, bounded length, no collisions.

Keys end up in SQL filters, file paths and URLs, so they are restricted to [a-z0-9_-]. Unicode
names are transliterated where possible (é -> e) and the rest becomes '_'.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
MAX_STEM = 64
CLIP_SEP = "__"  # raw key + CLIP_SEP + clip index; slugs never contain a double underscore


class InvalidKey(ValueError):
    pass


def slugify(name: str) -> str:
    """`My Vidéo (1).MP4` stem -> `my_video_1`. Never empty, never longer than MAX_STEM."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"[^a-z0-9-]+", "_", text)
    text = re.sub(r"_+", "_", text).strip("_-")
    if len(text) > MAX_STEM:
        text = text[: MAX_STEM - 7].rstrip("_-") + "_" + short_hash(name)
    return text or "video_" + short_hash(name)


def short_hash(text: str, n: int = 6) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()[:n]


def validate_key(key: str) -> str:
    if not KEY_RE.match(key):
        raise InvalidKey(f"partition key {key!r} must match {KEY_RE.pattern}")
    return key


def assign_raw_key(rel_path: str, taken: dict[str, str]) -> str:
    """Key for an inbox file given `taken` (key -> path already holding it). The slug of the file
    stem when free, else the slug plus a hash of the relative path (stable across runs)."""
    stem = rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    base = slugify(stem)
    if taken.get(base, rel_path) == rel_path:
        return base
    key = f"{base[: MAX_STEM - 7]}-{short_hash(rel_path)}"
    if taken.get(key, rel_path) != rel_path:  # astronomically unlikely; still never collide
        key = f"{base[: MAX_STEM - 13]}-{short_hash(rel_path, 12)}"
    return key


def clip_key(raw_key: str, index: int) -> str:
    return validate_key(f"{raw_key}{CLIP_SEP}{index:03d}")

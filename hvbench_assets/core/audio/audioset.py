"""AudioSet classes behind the L6 groups, by display name: one mapping for every AudioSet model
(AST's 527 classes in the full profile, YAMNet's 521 offline)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SPEECH_LABELS = frozenset({"Speech", "Male speech, man speaking", "Female speech, woman speaking",
                           "Child speech, kid speaking", "Conversation", "Narration, monologue", "Speech synthesizer"})
SINGING_LABELS = frozenset({"Singing", "Choir", "Child singing", "Synthetic singing", "Rapping", "Vocal music",
                            "A capella", "Yodeling"})
MUSIC_LABELS = frozenset({"Music", "Song", "Musical instrument", "Piano", "Guitar", "Drum", "Drum kit", "Pop music",
                          "Hip hop music", "Rock music"}) | SINGING_LABELS  # singing is music for L6
SILENCE_LABELS = frozenset({"Silence"})
GROUPS = {"speech": SPEECH_LABELS, "music": MUSIC_LABELS, "singing": SINGING_LABELS, "silence": SILENCE_LABELS}


def group_indices(names: Mapping[int, str] | Iterable[str]) -> dict[str, list[int]]:
    """{group: class indices} for a model's class names (a list, or AST's id2label)."""
    items = names.items() if isinstance(names, Mapping) else enumerate(names)
    pairs = [(int(i), n) for i, n in items]
    return {g: sorted(i for i, n in pairs if n in labels) for g, labels in GROUPS.items()}

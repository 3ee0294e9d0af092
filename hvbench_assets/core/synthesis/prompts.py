"""Prompts of the distractor-included synthesis (our own words): the shared score sheet and the builders each
family's module (core/tasks/families/) makes its own prompts with, so a family's fingerprint (its asset's code
version) changes only when one of ITS prompts changes.

Replies that carry structure are JSON objects; `{feedback}` is empty on the first attempt and names what
was wrong on the one retry (so the retry is a different request, never the cached first reply)."""

from __future__ import annotations

from hvbench_assets.core.mllm.prompts import Prompt

SYSTEM = ("You help build a multiple-choice video benchmark about people. Base every statement on what the "
          "frames show and follow the requested output format exactly.")
_TEXT = {"temperature": 0.0, "max_tokens": 300}
_VIDEO_FRAMES = 12  # every video prompt: the question video is decoded once per question

# -- 1. task-oriented captions ------------------------------------------------------------------
def caption_prompt(task: str, user: str, n_frames: int = _VIDEO_FRAMES) -> Prompt:
    return Prompt(name=f"synth_{task}_caption", system=SYSTEM, n_frames=n_frames, params=_TEXT, user=user + "{feedback}")


def flag_reply(flag: str, text: str, what: str) -> str:
    return f" Reply with JSON only: {{{{\"{flag}\": true or false, \"{text}\": \"{what}\"}}}}"


# -- 2. question generation -----------------------------------------------------------------------
def question_prompt(task: str, material: str, ask: str) -> Prompt:
    """The writer's question prompt: what the caption says, then what to ask; the reply is {question, answer}."""
    return Prompt(name=f"synth_{task}_question", system=SYSTEM, n_frames=0, params=_TEXT,
                  user=(material + "\nWrite one question " + ask
                        + " Reply with JSON only: {{\"question\": \"...\", \"answer\": \"...\"}}{feedback}"))


# -- 3. ensemble answers, 4. scores -------------------------------------------------------------------
_ANSWER = ("Answer the question about this video in one short sentence.{hint}\nQuestion: {question}")


def answer_prompt(task: str, hint: str) -> Prompt:
    return Prompt(name=f"synth_{task}_answer", system=SYSTEM, n_frames=_VIDEO_FRAMES, params=_TEXT,
                  user=_ANSWER.replace("{hint}", hint))


SCORE = Prompt(
    name="synth_score", system=SYSTEM, n_frames=_VIDEO_FRAMES, params=_TEXT,
    user=("Question about this video: {question}\nCandidate answers:\n{candidates}\n"
          "Score every candidate from 0 (wrong) to 10 (fully correct and complete) by how accurately it answers "
          "the question for this video. Reply with JSON only, one entry per candidate: "
          "{{\"scores\": {{\"1\": score, \"2\": score, ...}}}}"),
)

# -- 5. perturbation --------------------------------------------------------------------------------


def perturb_prompt(task: str, error_types: str) -> Prompt:
    return Prompt(
        name=f"synth_{task}_perturb", system=SYSTEM, n_frames=0, params={"temperature": 0.0, "max_tokens": 500},
        user=("A multiple-choice question about a video, its correct answer and draft wrong options.\n"
              "Question: {question}\nCorrect answer: {truth}\nDraft wrong options:\n{seeds}\n"
              "The drafts may also be right, which would make the question ambiguous. Edit each draft slightly so "
              "that it is clearly wrong, with errors of these kinds: " + error_types.replace("{", "{{").replace("}", "}}")
              + ". Keep every edit small (change a draft, do not write a new option), keep the three options "
              "different from each other and from the correct answer, and keep each about as long as the correct "
              "answer ({n_chars} characters; lengthen a short one). If fewer than three drafts are given, edit one "
              "of them in another way for the missing ones. Reply with JSON only: "
              "{{\"distractors\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    )

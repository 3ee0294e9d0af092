"""Prompts of the distractor-included synthesis (our own words). Each task gets its own instances, so a
task's fingerprint (its asset's code version) changes only when one of ITS prompts changes.

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


ETA_CAPTION = caption_prompt(
    "eta", "A face-focused description of one person over a video clip, and how the person looks:\n"
    "Face: {facial}\nAppearance: {appearance}\nDoes the person's emotion change during the clip?"
    + flag_reply("emotion_change", "emotion_sequence", "the emotions in the order they appear, in one sentence"),
    n_frames=0)
BTA_CAPTION = caption_prompt(
    "bta", "Watch the person inside the red box (appearance notes: {appearance}). Do this person's actions change "
    "over the video, and which actions do they perform, in order?"
    + flag_reply("action_change", "action_sequence", "the actions in order, in one sentence"))
BCA_CAPTION = caption_prompt(
    "bca", "Watch the person inside the red box (appearance notes: {appearance}). Is there a cause and effect "
    "involving this person: something that makes them act or react, or something they do that brings about an "
    "event? If there is none, say so."
    + flag_reply("causal_events_exist", "causal_events_description",
                  "the cause and its effect in one or two sentences, or an empty string"))
H2T_CAPTION = caption_prompt(
    "h2t", "A red box marks one person in these frames (appearance notes: {appearance}). In one sentence, describe "
    "this person so that they can be told apart from everyone else in the video, using their appearance, where "
    "they are and what they do. Begin with \"The person is\".")

# -- 2. question generation -----------------------------------------------------------------------
def question_prompt(task: str, material: str, ask: str) -> Prompt:
    """The writer's question prompt: what the caption says, then what to ask; the reply is {question, answer}."""
    return Prompt(name=f"synth_{task}_question", system=SYSTEM, n_frames=0, params=_TEXT,
                  user=(material + "\nWrite one question " + ask
                        + " Reply with JSON only: {{\"question\": \"...\", \"answer\": \"...\"}}{feedback}"))


ER_QUESTION = question_prompt(
    "er", "A description of one person in a video.\nFace and emotion: {caption}\nAppearance: {appearance}",
    "asking which emotion this person shows, referring to the person only by appearance, and its answer: one "
    "short sentence naming the emotion(s). The question must not name or hint at any emotion.")
ETA_QUESTION = question_prompt(
    "eta", "How one person's emotions develop over a video: {caption}\nAppearance: {appearance}",
    "asking how this person's emotions change as the video goes on, referring to the person only by appearance, "
    "and its answer: one sentence with the emotions in order. The question must not name any emotion.")
BTA_QUESTION = question_prompt(
    "bta", "The actions of one person in a video, in order: {caption}\nThe person: {appearance}",
    "asking which actions this person performs, in order, referring to the person only by appearance, and its "
    "answer: one short sentence listing the actions in order. The question must not name or hint at any of the "
    "actions.")
BCA_QUESTION = question_prompt(
    "bca", "A cause and effect involving one person in a video: {caption}\nThe person: {appearance}",
    "that asks either why the person does something (the answer is the cause) or what something the person does "
    "leads to (the answer is the effect), referring to the person by appearance, and its answer in one short "
    "sentence. The question must not state its answer.")

H2T_FIXED_QUESTION = ("Describe the person marked by the red box so that they can be told apart from everyone else "
                      "in the video, using appearance, position and actions.")
EIC_FIXED_QUESTION = ("Which of the persons numbered {numbers} shows the strongest emotion, and which emotion is it? "
                      "Answer as number-emotion, for example {first}-happy.")

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

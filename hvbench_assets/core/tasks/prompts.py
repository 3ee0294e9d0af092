"""Prompts of the model-built task families (our own words). Each prompt's fingerprint is part of its
task asset's code version: editing one marks exactly that task stale."""

from hvbench_assets.core.mllm.prompts import Prompt

_SYSTEM = ("You help build a video benchmark about people. Answer only from what the frames show, "
           "and follow the requested output format exactly.")

PERSON_DESCRIPTION = Prompt(
    name="task_person_description",
    system=_SYSTEM,
    user=("A red box marks one person in these frames (appearance notes: {appearance}). Write one sentence "
          "that singles this person out from everyone else in the video, using appearance, position and "
          "actions. Start with \"The person is\"."),
    n_frames=12,
    params={"temperature": 0.0, "max_tokens": 120},
)

ATTITUDE_CAPTION = Prompt(
    name="task_attitude_caption",
    system=_SYSTEM,
    user=("Look at the person inside the red box (appearance notes: {appearance}). Does this person show an "
          "attitude towards something or someone in the video, and is it positive, negative or neutral? "
          "Describe the attitude, what it is directed at and the visible cues, in at most 80 words."),
    n_frames=12,
    params={"temperature": 0.0, "max_tokens": 200},
)

ATTITUDE_QUESTION = Prompt(
    name="task_attitude_question",
    system=_SYSTEM,
    user=("From the description below, write one multiple-choice question about the attitude of the person "
          "described as: {appearance}. Refer to the person by appearance, never by the attitude itself, and do "
          "not reveal the answer in the question. Reply with JSON only: "
          "{{\"question\": \"...\", \"attitude\": \"positive\" | \"negative\" | \"neutral\"}}.\n"
          "Description: {caption}{feedback}"),
    n_frames=0,
    params={"temperature": 0.0, "max_tokens": 200},
)

SPEECH_DISTRACTORS = Prompt(
    name="task_speech_distractors",
    system=_SYSTEM,
    user=("Here is a sentence someone says in a video:\n\"{text}\"\nWrite three different sentences with a "
          "similar topic and meaning and about the same length ({n_chars} characters, within 30 %), each "
          "clearly different in wording from the original and from each other, so that a listener could tell "
          "which one was really said. Reply with JSON only: {{\"sentences\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    n_frames=0,
    params={"temperature": 0.7, "max_tokens": 400},
)

ACTION_DISTRACTORS = Prompt(
    name="task_action_distractors",
    system=_SYSTEM,
    user=("A person in a video performs this short action: \"{action}\". What is known about the person and "
          "the clip: {context}. Write three short actions that this person could plausibly do in such a "
          "clip but that are clearly different from the given action. Word each like the given action (if it "
          "begins with \"begins to\", so does each of yours). "
          "Reply with JSON only: {{\"actions\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    n_frames=0,
    params={"temperature": 0.7, "max_tokens": 200},
)

# AST the paper's way: the distractors come from the actions BTA's synthesis found in the same clip
ACTION_FROM_LIST = Prompt(
    name="task_action_distractors_from_list",
    system=_SYSTEM,
    user=("A person in a video performs this short action: \"{action}\". Over the whole clip this person does "
          "these actions, in order: {actions}. Choose three actions from this list that are clearly different from "
          "the given action, and edit each slightly so it stays clearly different. If the list holds fewer than "
          "three such actions, make up the missing ones so that they fit the clip. Word each like the given "
          "action (if it begins with \"begins to\", so does each of yours). "
          "Reply with JSON only: {{\"actions\": [\"...\", \"...\", \"...\"]}}{feedback}"),
    n_frames=0,
    params={"temperature": 0.7, "max_tokens": 200},
)

"""What the prompts of the rule families that ask a model share (our own words): the system message, and the
person description T2H and ATD both ask for. Each family's own prompts are in its module under
core/tasks/families/; a prompt's fingerprint is part of its family's code version: editing one marks exactly
that family stale."""

from hvbench_assets.core.mllm.prompts import Prompt

SYSTEM = ("You help build a video benchmark about people. Answer only from what the frames show, "
          "and follow the requested output format exactly.")

PERSON_DESCRIPTION = Prompt(
    name="task_person_description",
    system=SYSTEM,
    user=("A red box marks one person in these frames (appearance notes: {appearance}). Write one sentence "
          "that singles this person out from everyone else in the video, using appearance, position and "
          "actions. Start with \"The person is\"."),
    n_frames=12,
    params={"temperature": 0.0, "max_tokens": 120},
)

"""Open-ended replies to a small exported benchmark: six items whose option texts are in the forms the task rules
write, two answering models ("good", "poor"; "good-twin" repeats "good" word for word) and a scripted judge that
disagrees with the matcher once and is undecided once. Shared by the open-ended format's tests and the grade
queue's (`open_evaluation` runs `hvbench eval --format open` against a loopback server)."""

from __future__ import annotations

import re
from pathlib import Path

from hvbench_assets.core.benchmark.export import export_benchmark
from hvbench_assets.core.tasks.families.active_speaker_detection import MORE_THAN_ONE, NO_SPEAKER
from hvbench_assets.testkit.fake_openai_server import FakeOpenAIServer
from hvbench_assets.testkit.media_factory import moving_square_video

# (question id, task, question, options, right letter): option texts in the forms the task rules write
ITEMS = [
    ("hc0", "Human_Count", "How many different people appear in this video?", ["2", "3", "4", "5"], "B"),
    ("atd0", "Appearance_Time_Detection", "The person is a tall man. During which part of the video (in seconds) "
     "does this person appear?", ["From 0 s to 4 s", "From 3 s to 7 s", "From 5 s to 9 s", "From 1 s to 2 s"], "B"),
    ("tsa0", "Time_of_Specific_Action", "At which second does the person in the red box do this: \"waves\"?",
     ["At 5 s", "At 1 s", "At 9 s", "This is an ongoing action in the video."], "A"),
    ("asd0", "Active_Speaker_Detection", "Who is the active speaker in this video? Every person is marked by a box "
     "with a number.", ["Person 1", "Person 2", "Person 3", MORE_THAN_ONE, NO_SPEAKER], "B"),
    ("er0", "Emotion_Recognition", "What emotion does the person in the red box show?",
     ["The person looks happy.", "The person looks sad.", "The person looks angry.", "The person looks afraid."], "A"),
    ("h2t0", "Human2Text", "Which description fits the person in the red box?",
     ["The person is wearing a red coat.", "The person is wearing a blue hat.", "The person is sitting on a bench.",
      "The person is holding a cup."], "A"),
]
# replies per model and item; "good-twin" repeats "good" word for word (the judge's replies then come from the cache)
REPLIES = {
    "good": {"hc0": "There are three people.", "atd0": "from 3 to 7 seconds", "tsa0": "Around second 5.",
             "asd0": "Person 2", "er0": "She seems cheerful.", "h2t0": "The person wears a red coat."},
    "poor": {"hc0": "5", "atd0": "0:00 to 0:04", "tsa0": "I cannot tell.", "asd0": "Person 2 or 3", "er0": "happy",
             "h2t0": "Someone in a blue hat."},
}
REPLIES["good-twin"] = REPLIES["good"]
# the judge, scripted per reply: it disagrees with the matcher once (on "cheerful") and is undecided once
JUDGE = {"There are three people.": "RIGHT", "from 3 to 7 seconds": "RIGHT", "Around second 5.": "Right.",
         "Person 2": "RIGHT", "She seems cheerful.": "WRONG", "The person wears a red coat.": "RIGHT",
         "5": "WRONG", "0:00 to 0:04": "WRONG", "I cannot tell.": "WRONG", "Person 2 or 3": "Hard to say.",
         "happy": "RIGHT", "Someone in a blue hat.": "WRONG, the coat is red"}


def mc_export(folder: Path, video_dir: Path) -> Path:
    """The six items as a multiple-choice export named after `folder` (its open twin is made by `eval --format open`)."""
    video = moving_square_video(video_dir / "clip.mp4", seconds=1.0)
    items = [{"question_id": q, "task": t, "question": question, "answer": a, "video_path": str(video),
              "options": [{"letter": "ABCDE"[k], "text": x} for k, x in enumerate(opts)],
              "review_state": "accepted", "leakage": "kept"} for q, t, question, opts, a in ITEMS]
    export_benchmark(items, folder, {"benchmark": folder.name})
    return folder


def judged_reply(prompt: str) -> str:
    return re.search(r"<<<\n(.*)\n>>>", prompt, re.S).group(1)


def respond(req) -> str:
    """The loopback server's replies: the judge's verdict, or the model's scripted answer to the item asked."""
    if req.model == "judge":
        return JUDGE[judged_reply(req.prompt)]
    qid = next(q for q, _, question, _, _ in ITEMS if f"Question: {question}\n" in req.prompt)
    return REPLIES[req.model][qid]


def models_file(path: Path, base_url: str, names=("good", "poor", "good-twin", "judge")) -> Path:
    path.write_text("\n".join(f'[models.{n}]\nmodel_id = "{n}"\nbase_url = "{base_url}"\n' for n in names))
    return path


def open_evaluation(folder: Path, warehouse: Path, models=("good", "poor")) -> None:
    """`hvbench eval --format open` of `models` on the export `folder`, judged by "judge", into `warehouse`."""
    from hvbench_assets.cli import main

    with FakeOpenAIServer(responder=respond) as server:
        mf = models_file(warehouse.parent / "models.toml", server.base_url)
        code = main(["eval", "--benchmark", str(folder), "--format", "open", *sum((["--model", m] for m in models), []),
                     "--judge", "judge", "--frames", "2", "--warehouse", str(warehouse), "--models-file", str(mf),
                     "--no-progress"])
    if code != 0:
        raise RuntimeError(f"hvbench eval --format open exited {code}")

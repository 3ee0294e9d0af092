"""A scripted set of models for the synthesis tests and benchmark: one writer (captions, questions,
perturbations, and the L4/L5 descriptions) and three answering models that disagree, told apart by the
model id the loopback server receives. Tests replace an entry to make one step misbehave."""

from __future__ import annotations

import json
import re

APPEARANCE = "a person in a red shirt number 0"
TRUTH = "The person waves, sits down, and drinks a glass of water."
ANSWERS = {  # three answering models that disagree
    "org/strong": "The person waves and then sits down on a chair.",
    "org/mid": "The person stands up and drinks some water slowly.",
    "org/weak": TRUTH,
}
# the strong model (weight 2) prefers the weak model's answer; unweighted, the writer's draft answer would win
SCORES = {"org/strong": {1: 5, 2: 6, 3: 2, 4: 9}, "org/mid": {1: 8, 2: 5, 3: 9, 4: 4}, "org/weak": {1: 8, 2: 5, 3: 6, 4: 5}}
GOOD_DISTRACTORS = ["The person waves, stands up, and drinks a glass of juice.",
                    "The person claps, sits down, and eats a piece of bread.",
                    "The person sits down, waves, and drinks a cup of coffee."]


# Per kind (ER, ETA, BCA): a question, three answering models' answers of the kind (the weak model's is the
# truth through the weights, as above) and distractors of the kind; used when `Script.questions` holds the kind
KIND_QUESTIONS = {
    "ER": {"question": "Which emotion does the woman in the green shirt show?", "answer": "She looks happy and amused."},
    "ETA": {"question": "How do the feelings of the woman in the green shirt develop?",
            "answer": "She is calm at first, then happy."},
    "BCA": {"question": "Why does the woman in the green shirt pick up the phone?", "answer": "Because it rings."},
}
KIND_ANSWERS = {
    "ER": {"org/strong": "The person looks sad and tense.", "org/mid": "The person looks bored.",
           "org/weak": "The person looks calm and relaxed."},
    "ETA": {"org/strong": "The person is angry at first, then calm.", "org/mid": "The person is happy throughout.",
            "org/weak": "The person is sad at first, then calm, then happy."},
    "BCA": {"org/strong": "Because a friend calls her name from the door.",
            "org/mid": "Because she wants to check the time.",
            "org/weak": "Because the phone on the table starts to ring loudly."},
}
KIND_TRUTHS = {k: a["org/weak"] for k, a in KIND_ANSWERS.items()}
KIND_DISTRACTORS = {
    "ER": ["The person looks sad and annoyed.", "The person looks joyful and proud.", "The person looks tense and angry."],
    "ETA": ["The person is sad at first, then angry, then happy.", "The person is calm at first, then sad, then happy.",
            "The person is sad at first, then happy, then calm."],
    "BCA": ["Because the doorbell rings loudly at the front door.", "Because the television in the room is switched on.",
            "Because a friend waves at her from the kitchen door."],
}


class Script:
    """responder(request) -> reply text, by what the prompt asks."""

    def __init__(self):
        self.bta_caption = json.dumps({"action_change": True, "action_sequence": "waves, sits down, drinks water"})
        self.bca_caption = json.dumps({"causal_events_exist": True,
                                       "causal_events_description": "A phone rings, so the person picks it up."})
        self.eta_caption = json.dumps({"emotion_change": True, "emotion_sequence": "calm, then surprised, then happy"})
        self.h2t_caption = "The person is the one in the red shirt on the left, waving."
        self.question = {"question": "What does the person in the red shirt do, in order?",
                         "answer": "The person waves, sits down and drinks water."}
        self.questions: dict[str, dict] = {}  # per task (ER, ETA, BTA, BCA); else `question`
        self.answers = dict(ANSWERS)
        self.scores = {m: dict(s) for m, s in SCORES.items()}
        self.perturb = [GOOD_DISTRACTORS]

    QUESTION_KINDS = {"which emotion this person shows": "ER", "emotions change": "ETA",
                      "which actions this person performs": "BTA", "asks either why": "BCA"}

    def __call__(self, req) -> str:
        p, model = req.prompt, req.model
        if "Write one question" in p:
            kind = next((k for marker, k in self.QUESTION_KINDS.items() if marker in p), "")
            return json.dumps(self.questions.get(kind, self.question))
        if "cropped around one person's face" in p:  # L5
            return "The face is calm at first, then the woman smiles widely and laughs."
        if "cropped around one person's body" in p:  # L4
            return "A young woman with long dark hair in a green shirt, sitting indoors."
        if "actions change" in p:
            return self.bta_caption
        if "cause and effect involving" in p:
            return self.bca_caption
        if "emotion change during the clip" in p:
            return self.eta_caption
        if "told apart from everyone else in the video, using their" in p:
            return self.h2t_caption
        kind = next((k for k, q in self.questions.items() if q["question"] in p and k in KIND_ANSWERS), None)
        if "Draft wrong options" in p:
            attempt = 1 if "previous distractors were rejected" in p else 0
            perturb = [KIND_DISTRACTORS[kind]] if kind else self.perturb
            return json.dumps({"distractors": perturb[min(attempt, len(perturb) - 1)]})
        if "Score every candidate" in p:
            n = len(re.findall(r"^\d+\. ", p, re.M))
            per = self.scores[model]
            return json.dumps({"scores": {str(i): per.get(i, 1) for i in range(1, n + 1)}})
        if "Answer the question about this video" in p:
            return (KIND_ANSWERS[kind] if kind else self.answers)[model]
        return "?"

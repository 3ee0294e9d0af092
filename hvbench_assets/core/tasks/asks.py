"""What questions ask, as word patterns the families' `Asks` combine (core/synthesis/checks.py `question_kind`).
Generous on purpose: they catch a question that asks another thing ("Which action best describes ..." above
attitude options), not wording they have not seen."""

EMOTION = r"\b(?:emotions?|emotional(?:ly)?|feel(?:s|ing|ings)?|felt|mood|express(?:es|ed|ing|ions?)?)\b"
ATTITUDE = (r"\b(?:attitudes?|stance|opinions?|views?|sentiments?|feel(?:s|ing|ings)?|think(?:s|ing)?|regards?|"
            r"regarding|towards?|approv\w*|disapprov\w*|disposition|outlook)\b")
CHANGE = (r"\b(?:chang\w*|develop\w*|evolv\w*|shift\w*|transition\w*|progress\w*|sequence|order|throughout|over "
          r"(?:the|time)|as the (?:video|clip)|first|start\w*|begin\w*|turn\w*|from\b.+\bto)\b")
ACTION = (r"\b(?:actions?|activit(?:y|ies)|do|does|did|doing|perform\w*|mov(?:e|es|ed|ing|ements?)|"
          r"behaviou?rs?|gestures?|steps?)\b")
ORDER = (r"\b(?:order|sequence|then|after|before|first|next|series|in turn|chang\w*|throughout|over the|"
         r"as the (?:video|clip))\b")
CAUSE = (r"\b(?:why|reasons?|caus\w*|effects?|results?|resulting|consequen\w*|leads?|led|prompt\w*|outcome|"
         r"because|due|respon\w*|brings?|brought|happens?|happened|follows?|followed|after)\b")
PERSON = r"\b(?:who|whose|whom|which (?:of the )?(?:persons?|people|one)|(?:select|choose|pick) the person)\b"
SPEECH = r"\b(?:speak\w*|speech|voices?|heard|talk\w*|said|says|spoken)\b"
TIME = r"\b(?:when|which part|what time|seconds?|moment)\b"
COUNT = r"\bhow many\b"
# a question that asks for another kind of answer than the family's options
ASKS_ACTION = (r"\b(?:which|what) (?:actions?|activit(?:y|ies)|movements?|gestures?)\b|"
               r"\bwhat (?:is|are) (?:he|she|they|the \w+) doing\b")
ASKS_TIME = r"\b(?:at (?:which|what) (?:second|time|moment)|during which part|how long)\b"
ASKS_CAUSE = r"^\W*why\b"
ASKS_EMOTION = r"\b(?:which|what) emotions?\b"
ASKS_FEELING = (ASKS_ACTION, ASKS_TIME, ASKS_CAUSE, COUNT)  # wrong for emotion and attitude questions

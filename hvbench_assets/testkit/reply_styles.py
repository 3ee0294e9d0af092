"""Model replies in real answer styles with the option each one names (or why none): the cases of
hvbench_assets_tests/core/scoring/test_extraction.py and the replies benchmarks/evaluation.py times."""

# the options the replies answer
EMOTIONS = [("A", "happy"), ("B", "sad and tired"), ("C", "angry"), ("D", "neutral")]

# (reply, letter, method): replies the extraction reads
PARSED = [
    ("B", "B", "bare_letter"), ("b", "B", "bare_letter"), ("(B)", "B", "bare_letter"), ("B.", "B", "bare_letter"),
    (" [C] ", "C", "bare_letter"), ("Option C", "C", "bare_letter"), ("**A**", "A", "bare_letter"),
    ("`D`", "D", "bare_letter"), ("（Ｂ）", "B", "bare_letter"), ("C。", "C", "bare_letter"),
    ("The answer is D.", "D", "answer_phrase"), ("Answer: (C) angry", "C", "answer_phrase"),
    ("The correct answer is **B**: sad and tired.", "B", "answer_phrase"),
    ("I think the answer is B because the man frowns.", "B", "answer_phrase"),
    ("Final answer: a.", "A", "answer_phrase"), ("My answer is option D", "D", "answer_phrase"),
    ("Correct option: A", "A", "answer_phrase"), ("I would choose B.", "B", "answer_phrase"),
    ("The correct answer is B, not C.", "B", "answer_phrase"), ("\\boxed{B}", "B", "answer_phrase"),
    ("<answer>C</answer>", "C", "answer_phrase"), ("答案是C", "C", "answer_phrase"), ("选项：B", "B", "answer_phrase"),
    ("我选B。", "B", "answer_phrase"), ("Your option is: D", "D", "answer_phrase"),
    ("I cannot be sure, but the answer is B.", "B", "answer_phrase"),
    ("A. happy", "A", "leading_letter"), ("B) sad", "B", "leading_letter"), ("D - neutral", "D", "leading_letter"),
    ("C: angry, because of the clenched fists", "C", "leading_letter"), ("B，悲伤", "B", "leading_letter"),
    ("Option B: sad and tired", "B", "option_word"),
    ("It is C.", "C", "lone_letter"), ("Based on the video, C", "C", "lone_letter"), ("A is correct.", "A", "lone_letter"),
    ("sad and tired", "B", "option_text"), ("The person looks angry.", "C", "option_text"),
    ("Neutral", "D", "option_text"), ("<think>maybe A or C</think>C", "C", "bare_letter"),
    ('{"answer": "B"}', "B", "answer_phrase"), ("Option (B)", "B", "bare_letter"), ("answer: option B", "B", "answer_phrase"),
    ("(B) sad and tired", "B", "leading_letter"), ("B\n\nExplanation: the man frowns.", "B", "lone_letter"),
    ("The best answer is: C) angry", "C", "answer_phrase"), ("Answer：Ｃ", "C", "answer_phrase"),
    ("Best option: [D]", "D", "answer_phrase"), ("ANSWER: D", "D", "answer_phrase"), ("answer is c", "C", "answer_phrase"),
    ("**Answer:** B", "B", "answer_phrase"), ("**B. sad and tired**", "B", "leading_letter"),
    ("I choose C because the person is clearly angry, not sad (B).", "C", "answer_phrase"),
    ("The correct answer is \"B\".", "B", "answer_phrase"), ("It's option D.", "D", "option_word"),
    ("I'd go with option C", "C", "option_word"), ("The man looks sad, so B.", "B", "lone_letter"),
    ("正确答案是 A", "A", "answer_phrase"), ("b) sad", "B", "leading_letter"), ("c. angry", "C", "leading_letter"),
    ("Selected option: B", "B", "lone_letter"), ("Option A: happy\nOption B: sad and tired\nAnswer: B", "B", "answer_phrase"), ("答：B", "B", "answer_phrase"), ("选择D", "D", "answer_phrase"),
]

# (reply, why): replies that name no option
UNPARSED = [
    ("", "empty"), ("   ", "empty"), (None, "empty"),
    ("I'm sorry, I cannot determine the emotion from the video.", "refusal"),
    ("I can't see any video, so I am unable to answer.", "refusal"), ("None of the options.", "refusal"),
    ("抱歉，我无法回答。", "refusal"),
    ("A or B", "ambiguous"), ("The answer is B or C.", "ambiguous"), ("The answer is B, C", "ambiguous"),
    ("The answer is a man in red", "no_match"), ("A man is smiling.", "no_match"),
    ("The answer is E.", "no_match"),  # a letter that is not an option
    ("happy or angry, hard to say", "ambiguous"), ("The answer cannot be determined.", "refusal"),
    ("I don't know.", "refusal"), ("Neither A nor B; it is C.", "ambiguous"), ("E", "no_match"),
]

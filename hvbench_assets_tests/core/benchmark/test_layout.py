"""Loader and writer for the published HumanVBench JSONL layout."""

import json

import pytest

from hvbench_assets.core.benchmark import (
    BenchmarkFormatError,
    Option,
    format_choices,
    load_benchmark,
    parse_choices,
    write_benchmark,
)
from hvbench_assets.core.tasks.catalog import TASKS, task_info, tasks_of
from hvbench_assets.core.tasks.family import CATEGORIES
from hvbench_assets.testkit.media_factory import moving_square_video

PUBLISHED_STYLE = "Option A: {3}\n\nOption B: {5}\n\nOption C: {7}\n\nOption D: {4}\n\n"  # braces, trailing blank block


def _line(qid, answer="B", choices=PUBLISHED_STYLE, video="Human_Count/Human_Count_1.mp4", **extra):
    return json.dumps({"Question": "How many people appear in the video?", "choices": choices,
                       "Answer": answer, "Video": video, "Question_id": qid, **extra})


def test_sixteen_tasks_in_four_categories_of_four():
    assert len({t.name for t in TASKS}) == len(TASKS)
    assert all(len([t for t in tasks_of(c) if t.from_paper]) == 4 for c in CATEGORIES)
    assert task_info("Behavior_Causualty_Analysis").abbrev == "BCA"
    assert task_info("scm").name == "Speech_Content_Matching"
    assert task_info("Nonexistent") is None


def test_parse_published_choices_with_trailing_blank_block():
    opts = parse_choices(PUBLISHED_STYLE)
    assert [(o.letter, o.text) for o in opts] == [("A", "3"), ("B", "5"), ("C", "7"), ("D", "4")]


def test_parse_multiline_option_text_and_list_form():
    opts = parse_choices("Option A: The man on the left\nwearing a red coat.\n\nOption B: Nobody")
    assert opts[0].text == "The man on the left wearing a red coat."
    assert [o.text for o in parse_choices(["Option A: yes", "Option B: no"])] == ["yes", "no"]
    assert [o.letter for o in parse_choices(["yes", "no", "maybe"])] == ["A", "B", "C"]


@pytest.mark.parametrize("bad", ["no options here", "Option A: only one", "Option A: x\n\nOption C: y",
                                 "Preamble\nOption A: x\n\nOption B: y", "Option A: x\n\nOption B: "])
def test_bad_choices_raise(bad):
    with pytest.raises(BenchmarkFormatError):
        parse_choices(bad)


def test_round_trip_format_choices():
    opts = (Option("A", "happy"), Option("B", "sad"))
    assert parse_choices(format_choices(opts)) == opts
    assert format_choices(["x", "y"]) == "Option A: {x}\n\nOption B: {y}\n\n"
    assert [o.text for o in parse_choices("Option A: plain\n\nOption B: {braced}")] == ["plain", "braced"]


def test_export_reads_like_the_reference_script_expects():
    """The reference evaluator takes the text between braces per block and counts blocks - 1 options."""
    import re

    choices = format_choices(["a man {left}", "two\nlines", "3"])
    blocks = choices.split("\n\n")
    assert len(blocks) - 1 == 3
    texts = [re.findall(r"\{(.*?)\}", b)[0] for b in blocks if "Option" in b]
    assert texts == ["a man (left)", "two lines", "3"]


def test_loader_reports_malformed_lines_with_file_and_line(tmp_path):
    moving_square_video(tmp_path / "Human_Count" / "Human_Count_1.mp4", seconds=1.0)
    lines = [
        _line("HC_1"),
        "{not json",
        _line("HC_2", answer="E"),  # not among the options
        json.dumps({"Question": "q", "Answer": "A", "Video": "v.mp4", "Question_id": "x"}),  # no choices
        "",
        _line("HC_1"),  # duplicate id
        _line("HC_3", answer="(c)", video="Human_Count/missing.mp4"),
    ]
    (tmp_path / "Human_Count.jsonl").write_text("\n".join(lines) + "\n")
    bench = load_benchmark(tmp_path)
    assert [i.question_id for i in bench.items] == ["HC_1", "HC_3"]
    assert bench.items[1].answer == "C"
    assert bench.items[0].video_path.exists()
    found = {(i.line, i.file.endswith("Human_Count.jsonl")) for i in bench.issues}
    assert found == {(2, True), (3, True), (4, True), (6, True)}
    msgs = {i.line: i.message for i in bench.issues}
    assert "invalid JSON" in msgs[2] and "'E'" in msgs[3] and "choices" in msgs[4] and "duplicate" in msgs[6]
    assert str(bench.issues[0]).startswith(str(tmp_path / "Human_Count.jsonl") + ":2:")
    (missing,) = bench.warnings  # missing video: kept, one summary warning
    assert missing.line == 7 and "1 of 2 videos not found" in missing.message and "missing.mp4" in missing.message


def test_loader_finds_files_in_a_subfolder_and_resolves_videos_from_root(tmp_path):
    moving_square_video(tmp_path / "videos" / "Human_Count" / "Human_Count_1.mp4", seconds=1.0)
    (tmp_path / "QA").mkdir()
    (tmp_path / "QA" / "Human_Count.jsonl").write_text(_line(1) + "\n")
    (tmp_path / "QA" / "Emotion_Recognition.jsonl").write_text(_line(7, video="x.mp4") + "\n")
    bench = load_benchmark(tmp_path, video_root=tmp_path / "videos")
    assert bench.tasks == ["Emotion_Recognition", "Human_Count"]
    hc = next(i for i in bench.items if i.task == "Human_Count")
    assert hc.question_id == "1" and hc.video_path.exists()
    only = load_benchmark(tmp_path, video_root=tmp_path / "videos", tasks=["HC"])
    assert {i.task for i in only.items} == {"Human_Count"}


def test_missing_root_is_an_issue_not_a_crash(tmp_path):
    bench = load_benchmark(tmp_path / "nope")
    assert bench.items == [] and "no .jsonl" in bench.issues[0].message


def test_writer_output_reads_back_identically(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "Human_Count.jsonl").write_text(_line("a", extra_field=1) + "\n" + _line("b", answer="D") + "\n")
    (src / "Speech_Content_Matching.jsonl").write_text(_line("s1", answer="A") + "\n")
    bench = load_benchmark(src)
    out = tmp_path / "out"
    written = write_benchmark(out, bench.items)
    assert [p.name for p in written] == ["Human_Count.jsonl", "Speech_Content_Matching.jsonl"]
    again = load_benchmark(out)
    assert [(i.task, i.question_id, i.options, i.answer, i.video) for i in again.items] == \
        [(i.task, i.question_id, i.options, i.answer, i.video) for i in bench.items]
    assert again.items[0].extra == {"extra_field": 1}
    assert json.loads((out / "Human_Count.jsonl").read_text().splitlines()[0])["choices"] == PUBLISHED_STYLE
    assert again.fingerprint == bench.fingerprint


@pytest.mark.parametrize("given,letter", [("B", "B"), (" b ", "B"), ("(C)", "C"), ("D.", "D"), ("Option A", "A"),
                                          ("B. 5", "B"), ("7", "C"), ("{4}", "D")])
def test_answer_forms(given, letter):
    from hvbench_assets.core.benchmark.layout import normalize_answer

    assert normalize_answer(given, parse_choices(PUBLISHED_STYLE)) == letter


def test_answer_that_is_neither_letter_nor_option_text():
    from hvbench_assets.core.benchmark.layout import normalize_answer

    with pytest.raises(BenchmarkFormatError):
        normalize_answer("nine", parse_choices(PUBLISHED_STYLE))


def _two_task_bench(root, video_of):
    """Two task files in `root`, three items each, `Video` as written by `video_of(task, i)`."""
    for task in ("Human_Count", "Emotion_Recognition"):
        (root / f"{task}.jsonl").write_text("".join(
            _line(f"{task}_{i}", video=video_of(task, i)) + "\n" for i in range(3)))


@pytest.mark.parametrize("layout", ["videos/", "videos/<task>/", "<task>/"])
def test_video_folder_found_automatically(tmp_path, layout):
    folder = {"videos/": lambda t: tmp_path / "videos", "videos/<task>/": lambda t: tmp_path / "videos" / t,
              "<task>/": lambda t: tmp_path / t}[layout]
    for task in ("Human_Count", "Emotion_Recognition"):
        for i in range(3):
            moving_square_video(folder(task) / f"{task}_{i}.mp4", seconds=0.5, size=(64, 48))
    _two_task_bench(tmp_path, lambda task, i: f"{task}_{i}.mp4")
    bench = load_benchmark(tmp_path)
    assert bench.video_problem is None and bench.warnings == []
    assert all(i.video_path == folder(i.task) / f"{i.question_id}.mp4" for i in bench.items)


def test_no_video_anywhere_is_one_problem_not_a_warning_per_item(tmp_path):
    _two_task_bench(tmp_path, lambda task, i: f"clips/{task}_{i}.mp4")
    bench = load_benchmark(tmp_path)
    assert len(bench.items) == 6 and bench.warnings == []
    assert "none of the 6 videos was found" in bench.video_problem and "clips/Emotion_Recognition_0.mp4" in bench.video_problem
    assert str(tmp_path / "videos") in bench.video_problem  # says where it looked


def test_the_same_video_in_two_folders_is_ambiguous(tmp_path):
    moving_square_video(tmp_path / "a.mp4", seconds=0.5, size=(64, 48))
    moving_square_video(tmp_path / "videos" / "a.mp4", seconds=0.5, size=(64, 48), color=(10, 10, 10))
    (tmp_path / "Human_Count.jsonl").write_text(_line("1", video="a.mp4") + "\n")
    bench = load_benchmark(tmp_path)
    assert "ambiguous" in bench.video_problem and str(tmp_path / "videos" / "a.mp4") in bench.video_problem
    chosen = load_benchmark(tmp_path, video_root=tmp_path / "videos")
    assert chosen.video_problem is None and chosen.items[0].video_path == tmp_path / "videos" / "a.mp4"

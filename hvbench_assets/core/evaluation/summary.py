"""The evaluation of one exported benchmark in a few terminal lines (the demo prints them): leakage per task
(tested / removed / repaired), the text-bias score per task, and, once a model has answered, accuracy per task
and modality arm, the item verdicts and the flagged audio-visual tasks; once it has answered the yes/no and open
folders written beside the export too, the three formats side by side.

    lines = summary_lines(manifest, verdicts, responses, runs)   # pure: rows in, lines out
    lines = benchmark_summary(warehouse, "hvbench", folder)     # the same, read from the warehouse and export

Every number is computed elsewhere and only shown here: repair.repair_counts (leakage), the export manifest's
`text_bias` section (scoring/textbias.py), scoring/arms.py (arms, verdicts, flags), so the demo and `hvbench
report` cannot disagree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hvbench_assets.core.benchmark.formats import DERIVED, MC
from hvbench_assets.core.benchmark.repair import repair_counts
from hvbench_assets.core.scoring import arms as arms_report
from hvbench_assets.core.scoring.formats import format_tables
from hvbench_assets.core.scoring.report import Table

_abbrev = arms_report._abbrev  # the task's acronym, as the report's tables show it

NO_MODEL = ("arms: no answering model has evaluated this export; set HVBENCH_MLLM_<NAME>_BASE_URL and "
            "HVBENCH_MLLM_<NAME>_MODEL (an OpenAI-compatible endpoint) and run again to get accuracy per task "
            "and arm (full, frames, audio, text: HVBENCH_EVAL_ARMS) and a verdict per item")


def text_table(table: Table, indent: str = "  ") -> list[str]:
    """A Table as aligned plain-text columns."""
    cells = [table.headers] + table.rows
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(table.headers))]
    return [indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]


def leakage_lines(verdicts: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per task: pooled, tested blind, removed, repaired (leakage_verdicts rows of one benchmark)."""
    tested = [v for v in verdicts if v["n_answers"]]
    if not tested:
        why = str(verdicts[0]["reason"]).removeprefix("not tested: ")[:160] if verdicts else "no pooled question"
        return [f"leakage (blind models): not run ({why})"]
    counts = repair_counts(verdicts)
    rows = [[_abbrev(t), str(c["pooled"]), str(c["tested"]), str(c["removed"]), str(c["repaired"])]
            for t, c in sorted(counts.items(), key=lambda kv: _abbrev(kv[0]))]
    return ["leakage (blind models) per task:"] + text_table(Table(["task", "pooled", "tested", "removed",
                                                                    "repaired"], rows))


def bias_lines(section: Mapping[str, Any] | None) -> list[str]:
    """The export manifest's `text_bias` section: per task, how far a classifier of the texts alone gets
    above chance, and whether that is significant."""
    per_task = (section or {}).get("per_task") or {}
    if not per_task:
        return ["text bias: no exported question to score"]
    rows, scored, predictable = [], 0, []
    for task, b in sorted(per_task.items(), key=lambda kv: _abbrev(kv[0])):
        if b.get("accuracy") is None:
            rows.append([_abbrev(task), str(b["items"]), "-", f"{100 * b['chance']:.0f}", "-", "-",
                         str(b.get("note") or "not scored")])
            continue
        scored += 1
        if b["predictable"]:
            predictable.append(_abbrev(task))
        rows.append([_abbrev(task), str(b["items"]), f"{b['predicted']} ({100 * b['accuracy']:.0f} %)",
                     f"{100 * b['chance']:.0f}", f"{100 * b['above_chance']:+.0f}", f"{b['p_value']:.3g}",
                     "yes" if b["predictable"] else "no"])
    head = (f"text bias (no model: a classifier of question and option texts, clip-grouped folds; alpha "
            f"{section.get('alpha')}): {len(predictable)} of {scored} scored task(s) predictable from text"
            + (f" ({', '.join(predictable)})" if predictable else "")
            + ("" if scored else "; every task is below the minimum item count"))
    return [head] + text_table(Table(["task", "items", "predicted", "chance %", "above chance %", "p",
                                      "predictable"], rows))


def arms_lines(responses: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Accuracy per task and arm, verdict counts per task, flagged audio-visual tasks; NO_MODEL without runs."""
    if not runs:
        return [NO_MODEL]
    data = arms_report.build_arms(responses, runs)
    if data is None:
        return ["arms: only the full arm was run (HVBENCH_EVAL_ARMS=all asks every item full, frames-only, "
                "audio-only and text-only)"]
    lines = ["accuracy (%) per task and arm:"] + text_table(arms_report.accuracy_table(data))
    lines += ["item verdicts per task (an arm answers an item when most models taking it were right):"]
    lines += text_table(arms_report.verdict_table(data))
    lines.append("flagged audio-visual tasks (every model answered from frames alone):")
    flagged = arms_report.flagged_lines(data)
    lines += [f"  {f}" for f in flagged] if flagged else ["  none: no audio-visual item was answered frames-only by "
                                                          "every model"]
    missing = [a for a in arms_report.ARMS if a not in data.arms]
    if missing:
        lines.append(f"arms not run: {', '.join(missing)}")
    no_audio = sorted({m for (m, arm) in data.accuracy if arm == arms_report.FULL_NO_AUDIO}
                      - {m for (m, arm) in data.accuracy if arm == "audio"})
    for m in no_audio:
        lines.append(f"audio arm not asked of {m}: its registry entry takes no audio "
                     f"(HVBENCH_MLLM_{m.upper()}_ACCEPTS_AUDIO=true if the endpoint takes input_audio parts)")
    return lines


def formats_lines(by_format: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """The formats of one export side by side for the first model (by name) that answered more than multiple choice
    (core/scoring/formats.py); nothing when none did."""
    tables = format_tables(by_format)
    if not tables:
        return []
    model, table = next(iter(tables.items()))
    return ([f"the {len(table.headers) - 1} formats side by side ({model}, full arm: right/asked; yes/no statements "
             "are half 'yes', so answering one word always scores 50 %; open-ended replies are graded by the matcher, "
             "else the judge, else count wrong):"] + text_table(table))


def summary_lines(manifest: Mapping[str, Any] | None, verdicts: Sequence[Mapping[str, Any]],
                  responses: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]],
                  formats: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> list[str]:
    """The whole summary; without evaluation runs: leakage, text bias and one line on configuring a model.
    `formats`: the replies to the export's yes/no and open folders by format, for `formats_lines`."""
    return (["== evaluation summary =="] + leakage_lines(verdicts) + bias_lines((manifest or {}).get("text_bias"))
            + arms_lines(responses, runs) + formats_lines({MC: responses, **(formats or {})}))


def benchmark_summary(warehouse, benchmark: str, folder: Path) -> list[str]:
    """summary_lines for one benchmark: its manifest in `folder`, its leakage verdicts and evaluation rows, and
    the replies to the yes/no and open folders written beside it (benchmarks named after those folders)."""
    from hvbench_assets.core.benchmark.tables import LEAKAGE_VERDICTS
    from hvbench_assets.core.evaluation.tables import EVAL_RESPONSES, EVAL_RUNS

    manifest_path = Path(folder) / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else None
    formats = {fmt: rows for fmt, (where, _) in DERIVED.items()
               if (rows := warehouse.rows(EVAL_RESPONSES, benchmark=where(folder).name))}
    return summary_lines(manifest, warehouse.rows(LEAKAGE_VERDICTS, benchmark=benchmark),
                         warehouse.rows(EVAL_RESPONSES, benchmark=benchmark),
                         warehouse.rows(EVAL_RUNS, benchmark=benchmark), formats)

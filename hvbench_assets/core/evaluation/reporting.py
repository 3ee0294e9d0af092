"""Report for one benchmark from the warehouse: every run of it, rendered and stored as tables."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from hvbench_assets.core.benchmark.formats import DERIVED, MC
from hvbench_assets.core.benchmark.open_ended import OPEN
from hvbench_assets.core.benchmark.yesno import YESNO
from hvbench_assets.core.evaluation.item_info import collect
from hvbench_assets.core.evaluation.tables import (
    EVAL_DISTRACTORS,
    EVAL_ITEM_ARMS,
    EVAL_ITEM_STATS,
    EVAL_RESPONSES,
    EVAL_RUNS,
    EVAL_TASK_SCORES,
)
from hvbench_assets.core.scoring.report import (
    DEFAULT_ITEM_MAX_UNPARSED,
    ReportData,
    build_report,
    item_stat_rows,
    review_candidates,
    task_score_rows,
    write_report,
)
from hvbench_assets.core.curation import flags as review_flags
from hvbench_assets.core.curation.grading import grades as human_grades
from hvbench_assets.core.curation.grading import human_verdicts
from hvbench_assets.core.scoring import arms as arms_report
from hvbench_assets.core.scoring import consistency, open_report
from hvbench_assets.core.scoring import formats as formats_report
from hvbench_assets.core.scoring.formats import format_tables
from hvbench_assets.core.scoring.textbias import text_bias
from hvbench_assets.core.scoring.uncertainty import StatsSettings
from hvbench_assets.core.media.paths import resolve
from hvbench_assets.core.warehouse import Warehouse

# v3: clip-clustered statistics and text bias; v4: modality arms; v5: open-ended grading and consistency sections;
# v6: flags "every model wrong, text arm at chance" and back to review, the open-ended grading's agreement with people;
# v7: a multiple-choice report shows its yes/no and open siblings side by side, and the open-ended grading
# v8: "every model wrong" only where the models missing it by luck is under 5 % (their other answers)
REPORT_CODE_VERSION = "report-v8"


def benchmark_names(warehouse: Warehouse) -> list[str]:
    if not warehouse.has_table(EVAL_RUNS.name):
        return []
    return [r["benchmark"] for r in warehouse.query("SELECT DISTINCT benchmark FROM eval_runs ORDER BY 1")]


def _sibling(warehouse: Warehouse, benchmark: str, fmt: str) -> tuple[list[dict], Path | None]:
    """Full-arm replies to `<benchmark>_<fmt>` (the yes/no or open folder written beside it) and that folder, or
    nothing when it was not evaluated or its folder is gone."""
    name = f"{benchmark}_{fmt}"
    runs = [r for r in warehouse.rows(EVAL_RUNS, benchmark=name) if arms_report.run_arm(r.get("config")) == "full"]
    roots = [p for r in runs if (p := resolve(r.get("benchmark_root"))) is not None and (p / "manifest.json").is_file()]
    if not roots:
        return [], None
    wanted = {r["run_id"] for r in runs}
    return [r for r in warehouse.rows(EVAL_RESPONSES, benchmark=name) if r["run_id"] in wanted], roots[-1]


def _yesno_sibling(warehouse: Warehouse, benchmark: str) -> tuple[list[dict], dict]:
    """Full-arm replies to `<benchmark>_yesno` and the statements of its manifest (source item and option)."""
    rows, root = _sibling(warehouse, benchmark, YESNO)
    return (rows, json.loads((root / "manifest.json").read_text()).get("statements") or {}) if root else ([], {})


def _format_sections(warehouse: Warehouse, benchmark: str, mc_rows: list[dict], human) -> list[tuple[str, str]]:
    """Beside a multiple-choice report, once its yes/no or open folder was evaluated too: the formats side by side
    and the open-ended grading (the judge's agreement with the matcher and with people)."""
    siblings = {fmt: _sibling(warehouse, benchmark, fmt)[0] for fmt in DERIVED}
    out = []
    tables = format_tables({MC: mc_rows, **{f: rows for f, rows in siblings.items() if rows}})
    if tables:
        out.append((formats_report.markdown_section(tables), formats_report.html_section(tables)))
    open_rows = siblings.get(OPEN) or []
    if open_rows:
        labels = {r["run_id"]: r["model"] for r in open_rows}  # that benchmark's runs, named by their model
        graded = open_report.open_grading(open_rows, labels, human_verdicts(human, open_rows))
        if graded:
            out.append((open_report.markdown_section(graded), open_report.html_section(graded)))
    return out


def report_for(warehouse: Warehouse, benchmark: str, human: Mapping[str, float] | None = None,
               run_ids: Sequence[str] | None = None, out_dir: str | Path | None = None,
               store: bool = True, item_max_unparsed: float = DEFAULT_ITEM_MAX_UNPARSED,
               stats: StatsSettings | None = None,
               model_names: Mapping[str, str] | None = None) -> tuple[ReportData, dict[str, Path]]:
    """Build the report of every run (or `run_ids`) on `benchmark`; write it to `out_dir` and, with
    `store`, replace the benchmark's rows in eval_task_scores / eval_item_stats / eval_distractors.
    Clips, target labels and texts of the items (core/evaluation/item_info.py) feed the intervals, the slices
    and the text-bias score; `stats` sets the bootstrap (resamples, seed) and the minimum slice size; the charts name
    models by `model_names` (registry key -> model id)."""
    runs = warehouse.rows(EVAL_RUNS, benchmark=benchmark)
    if run_ids:
        runs = [r for r in runs if r["run_id"] in set(run_ids)]
    wanted = {r["run_id"] for r in runs}
    rows = [r for r in warehouse.rows(EVAL_RESPONSES, benchmark=benchmark) if r["run_id"] in wanted]
    issues = runs[0]["load_issues"] if runs and runs[0].get("load_issues") else []
    roots = [r["benchmark_root"] for r in runs if r.get("benchmark_root")]
    info = collect(warehouse, roots[-1] if roots else None, {(r["task"], str(r["question_id"])) for r in rows})
    arms = arms_report.build_arms(rows, runs)
    # the leaderboard, item statistics and intervals are over full-arm runs; other arms get their own section
    full = {r["run_id"] for r in runs if arms_report.run_arm(r.get("config")) == "full"} or wanted
    data = build_report([r for r in rows if r["run_id"] in full], [r for r in runs if r["run_id"] in full],
                        benchmark=benchmark, human=human, load_issues=issues,
                        item_max_unparsed=item_max_unparsed, item_info=info.info, clustering=info.clustering,
                        stats=stats, text_bias=text_bias(info.texts, seed=(stats or StatsSettings()).seed)
                        if info.texts else None, model_names=model_names)
    if arms is not None:
        data.text_arm = {(it.task, it.question_id): it.votes["text"] for it in arms.items if "text" in it.votes}
        data.sections.append((arms_report.markdown_section(arms), arms_report.html_section(arms)))
    found = consistency.consistency([r for r in rows if r["run_id"] in full],
                                    {k: v.get("person_group") for k, v in info.info.items()},
                                    *_yesno_sibling(warehouse, benchmark))
    if any(c.groups or c.pairs for c in found):
        data.sections.append((consistency.markdown_section(found), consistency.html_section(found)))
    open_rows = [r for r in rows if r["run_id"] in full]
    people = human_grades(warehouse)
    graded = open_report.open_grading(open_rows, {v.run_id: v.label for v in data.runs}, human_verdicts(people, open_rows))
    if graded:
        data.sections.append((open_report.markdown_section(graded), open_report.html_section(graded)))
    else:  # a multiple-choice benchmark (a derived one has no siblings of its own)
        data.sections += _format_sections(warehouse, benchmark, open_rows, people)
    if store:
        prov = {"backend": "scoring", "model": None, "code_version": REPORT_CODE_VERSION}
        model_of = {v.run_id: v.model for v in data.runs}
        warehouse.replace(EVAL_TASK_SCORES, {"benchmark": benchmark},
                          [{**r, "model": model_of[r["run_id"]]} for r in task_score_rows(data)], provenance=prov)
        warehouse.replace(EVAL_ITEM_STATS, {"benchmark": benchmark}, item_stat_rows(data), provenance=prov)
        warehouse.replace(EVAL_DISTRACTORS, {"benchmark": benchmark}, data.option_picks, provenance=prov)
        warehouse.replace(EVAL_ITEM_ARMS, {"benchmark": benchmark},
                          arms_report.item_rows(arms) if arms else [], provenance=prov)
        data.sent_to_review = sent = review_flags.write_flags(warehouse, benchmark, review_candidates(data))
        if any(sent.values()):
            data.sections.append(_review_section(sent))
    paths = write_report(data, out_dir) if out_dir else {}
    if out_dir and arms is not None:
        paths["arms"] = Path(out_dir) / arms_report.ARMS_CSV
        arms_report.write_csv(arms, paths["arms"])
    return data, paths


def _review_section(sent: dict[str, list[str]]) -> tuple[str, str]:
    """What the report sent back to the review queue (core/curation/flags.py), as Markdown and HTML."""
    from html import escape

    lines = [f"{len(sent['sent'])} flagged item(s) are in the review queue ({len(sent['new'])} new): "
             + (", ".join(sent["sent"]) or "none") + "."]
    if sent["not_ours"]:
        lines.append(f"{len(sent['not_ours'])} flagged item(s) are no question of this warehouse (a published "
                     f"benchmark?), so no review queue takes them: {', '.join(sent['not_ours'])}.")
    if sent["changed"]:
        lines.append(f"{len(sent['changed'])} flagged item(s) were regenerated since the export (their options "
                     f"differ), so the flag would not apply: {', '.join(sent['changed'])}.")
    note = (f"Items flagged for {' or '.join(repr(r) for r in review_flags.FOR_REVIEW)} go back to `hvbench review`, with the reason "
            "and the models' answers; a reviewer's correction or rejection reaches the next export, and "
            "`hvbench explain <question_id>` shows the flag and its outcome.")
    md = "\n".join(["## Back to review", "", note, ""] + [f"- {x}" for x in lines] + [""])
    return md, f"<h2>Back to review</h2><p>{escape(note)}</p><ul>" + "".join(f"<li>{escape(x)}</li>" for x in lines) + "</ul>"

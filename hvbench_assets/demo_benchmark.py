"""The main command's second half: from the clips' questions to an exported benchmark, then, when answering
models are configured, an evaluation of each and the report. Without a model nothing is faked: it says how
to point hvbench at an endpoint and stops after the export."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from hvbench_assets.core.benchmark.tables import LEAKAGE_VERDICTS, QUESTION_POOL


def curation_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("curation_job")


def benchmark_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("benchmark_job")


ENDPOINT_HELP = """No answering model is configured, so the leakage filter did not run and nothing was evaluated
(offline, no model here can answer video questions; hvbench never stands in a fake one).
Point it at any OpenAI-compatible endpoint (vLLM, OpenAI, Gemini's compatible API) and run the same command again:

  export HVBENCH_MLLM_MYMODEL_BASE_URL=http://my-host:8000/v1        # the endpoint
  export HVBENCH_MLLM_MYMODEL_MODEL=Qwen/Qwen2.5-VL-7B-Instruct       # the model id it serves
  export HVBENCH_MLLM_MYMODEL_API_KEY_ENV=MY_KEY                      # only when it wants a key (the variable's NAME)
  export HVBENCH_DESCRIBER_MODEL=mymodel                              # optional: also writes L4/L5/L11 and the model-built tasks

Several models: one set of HVBENCH_MLLM_<NAME>_* variables each (or entries in config/models.toml);
HVBENCH_MLLM_MODELS=a,b picks the answering ones. Then the same command filters leakage with them,
evaluates each on the export and writes the report."""


def _run(job_fn, instance: dg.DagsterInstance, partition: str | None = None) -> bool:
    tags = {"dagster/partition": partition} if partition else None
    return dg.execute_job(dg.reconstructable(job_fn), instance=instance, tags=tags).success


def _curate(instance: dg.DagsterInstance, ticks) -> bool:
    """curation_job as review_sensor requests it (its cursor stored, so the daemon does not run it again)."""
    if ticks is None:
        return _run(curation_job, instance)
    with ticks.tick("review_sensor") as tick:
        if not tick.run_requests:  # nothing new since the last curation: rebuilt anyway, as before
            return _run(curation_job, instance)
        ok = True
        for req in tick.run_requests:
            result = dg.execute_job(dg.reconstructable(curation_job), instance=instance, tags=tick.run_tags(req),
                                    raise_on_error=False)
            tick.launched(req, result.run_id)
            ok &= result.success
        return ok


def assemble(instance: dg.DagsterInstance, warehouse, benchmark, data_dir: str, ticks=None) -> tuple[bool, list[str]]:
    """Rebuild reviewed_questions (through review_sensor's tick when `ticks`, a SensorTicks, is given), run
    benchmark_job; lines describing pool, leakage and export."""
    lines = ["== benchmark =="]
    ok = True
    instance.add_dynamic_partitions("eval_benchmarks", [benchmark.name])  # what eval_partitions_sensor does
    for name, fn, partition in (("curation_job (reviewed_questions)", curation_job, None),
                                (f"benchmark_job ({benchmark.name})", benchmark_job, benchmark.name)):
        success = _curate(instance, ticks) if fn is curation_job else _run(fn, instance, partition)
        ok &= success
        lines.append(f"{name}: {'ok' if success else 'FAILED (see the run in the UI)'}")
        if not success:
            return False, lines
    pool = warehouse.rows(QUESTION_POOL, benchmark=benchmark.name)
    per: dict[str, list[int]] = {}
    waiting = 0
    for r in pool:
        c = per.setdefault(r["abbrev"], [0, 0])
        c[0] += 1
        c[1] += int(bool(r["selected"]))
        waiting += int(r["review_state"] == "unreviewed")
    lines.append("pool (available -> selected): " + (", ".join(f"{a} {n}->{k}" for a, (n, k) in sorted(per.items()))
                                                    or "no question yet"))
    verdicts = warehouse.rows(LEAKAGE_VERDICTS, benchmark=benchmark.name)
    tested = [v for v in verdicts if v["n_answers"]]
    if tested:
        repaired = sum(bool(v.get("repair_round")) for v in verdicts)
        lines.append(f"leakage: {len(tested)} tested, {sum(v['removed'] for v in verdicts)} removed"
                     + (f", {repaired} repaired" if repaired else ""))
    else:
        lines.append("leakage: not run" + (f" ({verdicts[0]['reason'].removeprefix('not tested: ')[:160]})" if verdicts else ""))
    folder = benchmark.folder(data_dir)
    manifest = json.loads((folder / "manifest.json").read_text())
    counts = {k: v for k, v in manifest["counts"].items() if v}
    lines.append(f"export: {manifest['n_items']} question(s) in {folder}")
    lines.append("  " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "no task has a question yet")
                 + f"; 16 task files + manifest.json; review states taken: {', '.join(manifest['review_states_exported'])}")
    if waiting:
        lines.append(f"  {waiting} question(s) wait for a reviewer and are not exported: `hvbench review` "
                     "(or HVBENCH_EXPORT_UNREVIEWED=1 to export them marked unreviewed)")
    lines.append("  explain any question: hvbench explain <Question_id from a task file>")
    return ok, lines


def evaluate_export(warehouse, mllm, evaluation, settings, benchmark) -> tuple[bool, list[str]]:
    """Each active answering model on the export, then the report; or how to configure one."""
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.evaluation import ModelMisconfigured, MllmAnswerer, evaluate
    from hvbench_assets.core.evaluation.reporting import report_for
    from hvbench_assets.core.mllm import ModelNotConfigured
    from hvbench_assets.core.scoring.report import render_markdown
    from hvbench_assets.defs.evaluation.assets import review_baseline

    lines = ["\n== evaluation =="]
    try:
        models = [m.name for m in mllm.registry().active()]
    except (ModelNotConfigured, ValueError, OSError) as exc:
        return False, lines + [f"model settings are wrong: {exc}"]
    if not models:
        return True, lines + [ENDPOINT_HELP]
    folder = benchmark.folder(settings.data_dir)
    bench = load_benchmark(folder, name=benchmark.name)
    if not bench.items:
        return True, lines + [f"the export in {folder} has no question yet: nothing to evaluate"]
    answerer = MllmAnswerer(mllm.client(warehouse))
    ok = True
    for model in models:
        for cfg in evaluation.configs_for(model):
            try:
                out = evaluate(bench, answerer, warehouse, cfg, progress=False)
            except (ModelNotConfigured, ModelMisconfigured) as exc:
                lines.append(f"{model}: {exc}")
                ok = False
                continue
            ok &= out.failed == 0
            lines.append(f"{out.run_id}: asked {out.asked}, already answered {out.skipped}, failed {out.failed}")
    human = review_baseline(warehouse, benchmark.name, evaluation, settings)
    data, paths = report_for(warehouse, benchmark.name, human=human,
                             out_dir=Path(settings.data_dir) / "reports" / benchmark.name)
    lines.append(render_markdown(data))
    lines += [f"{kind}: {path}" for kind, path in paths.items()]
    return ok, lines

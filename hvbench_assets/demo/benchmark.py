"""The main command's second half: from the clips' questions to an exported benchmark, then, when answering
models are configured, an evaluation of each (and of the first on the export's yes/no and open folders) and the
report. Without a model nothing is faked: it says how to point hvbench at an endpoint and stops after the export."""

from __future__ import annotations

import json

import dagster as dg

from hvbench_assets.core.benchmark.formats import DERIVED, FORMAT_NAMES
from hvbench_assets.core.benchmark.tables import LEAKAGE_VERDICTS, QUESTION_POOL
from hvbench_assets.demo.runs import execute


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
    return execute(job_fn, instance, tags, raise_on_error=True).success


def _curate(instance: dg.DagsterInstance, ticks) -> bool:
    """curation_job as review_sensor requests it (its cursor stored, so the daemon does not run it again)."""
    if ticks is None:
        return _run(curation_job, instance)
    with ticks.tick("review_sensor") as tick:
        if not tick.run_requests:  # nothing new since the last curation: rebuilt anyway, as before
            return _run(curation_job, instance)
        ok = True
        for req in tick.run_requests:
            result = execute(curation_job, instance, tick.run_tags(req))
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
    beside = [(where(folder), json.loads((where(folder) / "manifest.json").read_text())) for where, _ in DERIVED.values()]
    lines.append("  beside it, the same items as " + ", ".join(f"{FORMAT_NAMES[m['format']]} ({m['n_items']} in "
                                                                f"{f.name})" for f, m in beside)
                 + "; every line carries its Evidence (time span, person boxes, label rows)")
    if waiting and not benchmark.include_unreviewed:
        lines.append(f"  {waiting} question(s) wait for a reviewer and are not exported: `hvbench review` "
                     "(or HVBENCH_EXPORT_UNREVIEWED=1 to export them marked unreviewed)")
    lines.append("  explain any question: hvbench explain <Question_id from a task file>")
    return ok, lines


def evaluation_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("evaluation_job")


def eval_report_job():
    from hvbench_assets.definitions import defs

    return defs().resolve_job_def("eval_report_job")


def _failure(result) -> str:
    errors = [e.event_specific_data.error for e in result.all_events
              if e.is_step_failure and e.event_specific_data and e.event_specific_data.error]
    msgs = [(err.cause or err).message.strip() for err in errors]  # the user code's error, not Dagster's wrapper
    return (msgs[0].splitlines()[-1][:300] if msgs else "see the run in the UI")


FULL_ARM = {"evaluation": {"config": {"arms": "full"}}}  # the yes/no and open runs: the arm the formats compare


def _evaluate(instance: dg.DagsterInstance, benchmark: str, model: str, lines: list[str],
              resources: dict | None = None) -> bool:
    """evaluation_job for one benchmark|model partition, its outcome added to `lines`."""
    key = dg.MultiPartitionKey({"benchmark": benchmark, "model": model})
    # a multi-partition run names the key and each dimension (as the UI's launch does)
    tags = {"dagster/partition": str(key), **{f"dagster/partition/{d}": k for d, k in key.keys_by_dimension.items()}}
    result = execute(evaluation_job, instance, tags, resources=resources)
    if not result.success:
        lines.append(f"eval_responses/{key}: FAILED ({_failure(result)})")
        return False
    meta = result.asset_materializations_for_node("eval_responses")[0].metadata
    lines.append(f"eval_responses/{key}: asked {meta['asked_now'].value}, already answered "
                 f"{meta['already_answered'].value}, failed {meta['failed_calls'].value} "
                 f"(runs {', '.join(meta['run_ids'].value)})")
    return True


def evaluate_export(instance: dg.DagsterInstance, mllm, settings, benchmark) -> tuple[bool, list[str]]:
    """Each active answering model on the export (evaluation_job, one benchmark|model partition each), then
    eval_report_job: materializations in the UI like any other; or how to configure a model."""
    from hvbench_assets.core.benchmark import load_benchmark
    from hvbench_assets.core.mllm import ModelNotConfigured
    from hvbench_assets.defs.evaluation.partitions import eval_benchmarks_partitions, eval_models_partitions
    from hvbench_assets.defs.evaluation.sensors import SAFE_NAME

    lines = ["\n== evaluation =="]
    try:
        models = [m.name for m in mllm.registry().active()]
    except (ModelNotConfigured, ValueError, OSError) as exc:
        return False, lines + [f"model settings are wrong: {exc}"]
    if not models:
        return True, lines + [ENDPOINT_HELP]
    folder = benchmark.folder(settings.data_dir)
    if not load_benchmark(folder, name=benchmark.name).items:
        return True, lines + [f"the export in {folder} has no question yet: nothing to evaluate"]
    unsafe = [m for m in models if not SAFE_NAME.match(m)]
    lines += [f"{m}: not a usable partition key (allowed: {SAFE_NAME.pattern}); rename the model" for m in unsafe]
    models = [m for m in models if m not in unsafe]
    instance.add_dynamic_partitions(eval_models_partitions.name,  # what eval_partitions_sensor does
                                    [m for m in models if not instance.has_dynamic_partition(eval_models_partitions.name, m)])
    ok = not unsafe
    for model in models:
        ok &= _evaluate(instance, benchmark.name, model, lines)
    if models:  # the same items as yes/no statements and open questions, for one model (its full arm: kept short)
        derived = [where(folder).name for where, _ in DERIVED.values()]
        instance.add_dynamic_partitions(eval_benchmarks_partitions.name,  # what eval_partitions_sensor does
                                        [b for b in derived if not instance.has_dynamic_partition(
                                            eval_benchmarks_partitions.name, b)])
        for name in derived:
            ok &= _evaluate(instance, name, models[0], lines, resources=FULL_ARM)
    result = execute(eval_report_job, instance, {"dagster/partition": benchmark.name})
    if not result.success:
        return False, lines + [f"eval_report/{benchmark.name}: FAILED ({_failure(result)})"]
    meta = result.asset_materializations_for_node("eval_report")[0].metadata
    lines.append(meta["report"].value)
    lines += [f"{kind}: {meta[kind].value}" for kind in ("html", "markdown", "flagged_items")]
    lines.append(f"in the UI: asset eval_report, partition {benchmark.name} (charts and scores over time)")
    return ok, lines

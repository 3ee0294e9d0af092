"""Several clips in one run: every per-clip asset and check also accepts a `videos` partition key range.

A per-clip run has a fixed cost of 5-6 s (run worker start-up, code loading, Dagster's bookkeeping of ~40 steps),
more than the labels of a 2-6 s clip cost. A run over a key range (clip_sensor's batch of short clips, a
backfill's run of up to HVBENCH_BACKFILL_CLIPS_PER_RUN clips, or a range run launched by hand) pays it once: each
step loops over the range's clips, calling the asset's single-clip body with a context whose `partition_key` is
that clip's.

Dagster materializes every partition of a range when the step succeeds, and has no way yet to mark one
partition of a range as failed (dagster-io/dagster#17836). So one clip's failure never fails the step: it is
caught, logged, and recorded on that partition's materialization as metadata `hvbench/status` = `failed` with
`hvbench/error` (the exception's text: the clip, the file and the reason), while the other clips' rows are
written as usual and their events carry `hvbench/status` = `ok` plus their own metadata (partition-scoped
metadata, `add_asset_metadata(partition_key=...)`). Asset checks are evaluated per clip and recorded per
partition. The step fails only when every clip of the range failed. A one-clip run behaves exactly as before
(the body runs unwrapped, failures fail the step). The clips' warehouse writes are held and committed together
when the step's clips are done (core/warehouse/grouped.py; a clip whose rows fail to commit fails alone). A step
tagged `hvbench/split: clips` (L1 and L7, the batch's longest steps) hands about half of its clips (by weight) to a
forked helper process (`_outcomes`), unless it runs in a step's forked child itself (L7 beside the run's task
steps; `_no_split` lists every case).
"""

from __future__ import annotations

import functools
import os
import pickle
import signal
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import dagster as dg

from hvbench_assets import settings_table
from hvbench_assets.core.processes import has_run
from hvbench_assets.core.warehouse.grouped import grouped_writes
from hvbench_assets.runtime.executor import die_with_parent, flush_std_streams, fork_safe, forked_step, machine_cores

BATCH_MAX = 8  # clips per clip_sensor batch (a backfill's runs: HVBENCH_BACKFILL_CLIPS_PER_RUN, 8 by default too)
SHORT_CLIP_S = 8.0  # clip_sensor batches clips up to this long; a longer clip's labels outweigh a run's fixed cost
BATCH_TAG = "hvbench/batch"  # run tag of a clip_sensor batch: how many clips


def clip_backfill_policy(clips_per_run: int) -> dg.BackfillPolicy | None:
    """How a backfill launched from the UI (asset graph, asset or job page) groups its clips into runs: key ranges
    of at most `clips_per_run` clips, or one run per clip for 1 (the cluster's choice: runs spread over its nodes
    and a lost node's retry redoes one clip). Long clips gain too: 8 clips of 10-22 s took 0.44x their duration in
    one run against 0.75x in one run each (docs/performance.md)."""
    if clips_per_run < 1:
        raise ValueError(f"HVBENCH_BACKFILL_CLIPS_PER_RUN={clips_per_run}: expected 1 (one run per clip) or more")
    return dg.BackfillPolicy.multi_run(clips_per_run) if clips_per_run > 1 else None


CLIP_BACKFILL_POLICY = clip_backfill_policy(settings_table.value("HVBENCH_BACKFILL_CLIPS_PER_RUN"))
# `backfill_policy` is a beta parameter of @asset, used knowingly (Dagster is pinned): without this every process
# that loads the definitions printed its warning once per module
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)
STATUS = "hvbench/status"
ERROR = "hvbench/error"
# op tag; value "clips": a batch step hands about half of its clips to a process forked for them (see _outcomes)
SPLIT_TAG = "hvbench/split"  # as a run tag, "off": no step of the run splits
SPLIT_FRESH_TAG = "hvbench/split_fresh"  # op tag: a native runtime (core/processes.py) that must not have run yet
SPLIT_MIN_CLIPS = 4  # fewer clips: the fork and a second model load would cost more than they save


def range_tags(first: str, last: str) -> dict[str, str]:
    """Run tags of a run over the `videos` key range first..last (what a multi-run backfill sets)."""
    return {"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last}


def request_label(request: dg.RunRequest) -> str:
    """videos/<key>, or videos/<first>...<last> for a batch."""
    tags = request.tags or {}
    if request.partition_key or "dagster/asset_partition_range_start" not in tags:
        return f"videos/{request.partition_key}"
    return (f"videos/{tags['dagster/asset_partition_range_start']}...{tags['dagster/asset_partition_range_end']}"
            f" ({tags.get(BATCH_TAG, '?')} clips)")


class OneClip:
    """The step's context as one clip of a batch sees it: the partition is that clip's."""

    batched = True

    def __init__(self, context: Any, key: str, recorded: list | None = None):
        self._context = context
        self._key = key
        self._recorded = recorded  # in a split's helper process: metadata to hand back instead of storing it

    @property
    def partition_key(self) -> str:
        return self._key

    @property
    def partition_keys(self) -> Sequence[str]:
        return [self._key]

    @property
    def has_partition_key(self) -> bool:
        return True

    @property
    def partition_key_range(self) -> dg.PartitionKeyRange:
        return dg.PartitionKeyRange(self._key, self._key)

    @property
    def batch_keys(self) -> Sequence[str]:
        """Every clip of the step's range, this one included."""
        return _keys(self._context)

    def add_asset_metadata(self, metadata, asset_key=None, partition_key=None) -> None:
        self._metadata(partition_key or self._key, metadata, asset_key)

    def add_output_metadata(self, metadata, output_name=None, mapping_key=None) -> None:
        self._metadata(self._key, metadata, None)

    def _metadata(self, key: str, metadata, asset_key) -> None:
        if self._recorded is not None:
            self._recorded.append((key, dict(metadata), asset_key))
        else:
            partition_metadata(self._context, key, metadata, asset_key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def partition_metadata(context: Any, key: str, metadata, asset_key=None) -> None:
    """`context.add_asset_metadata(metadata, partition_key=key)` for a key of the step's own range, without the
    check that resolves the whole range again from the instance (3 queries per call, ~600 per batch of 8 clips,
    about 1 % of its CPU). Only the step's metadata accumulator is touched (Dagster is pinned); where it is missing the
    public call runs instead."""
    step = context.get_step_execution_context() if hasattr(context, "get_step_execution_context") else None
    accumulated = getattr(step, "_metadata_accumulator", None)
    if accumulated is None or not hasattr(accumulated, "with_additional_asset_metadata"):
        context.add_asset_metadata(metadata, asset_key=asset_key, partition_key=key)
        return
    step._metadata_accumulator = accumulated.with_additional_asset_metadata(  # noqa: SLF001
        asset_key=dg.AssetKey.from_coercible(asset_key) if asset_key else context.assets_def.key,
        partition_key=key, metadata=metadata)


def run_plans(context: Any, asset_name: str) -> bool:
    """Whether this run also materializes `asset_name` (an asset op's name is its asset's)."""
    run = context.run
    if run.asset_selection:  # may be empty when the run's steps say it
        return dg.AssetKey(asset_name) in run.asset_selection
    if run.step_keys_to_execute is not None:
        return asset_name in run.step_keys_to_execute
    return context.job_def.graph.has_node_named(asset_name)


def is_batch(context: Any) -> bool:
    """True inside one clip of a multi-clip run (run tags then describe the batch, not this clip)."""
    return getattr(context, "batched", False)


def _keys(context: Any) -> Sequence[str]:
    return context.partition_keys if context.has_partition_key_range else [context.partition_key]


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, dg.Failure) and exc.description:
        return exc.description
    return f"{type(exc).__name__}: {exc}"


def per_clip(fn: Callable[..., dg.MaterializeResult] | None = None, *,
             cost: Callable[..., Mapping[str, float]] | None = None) -> Any:
    """Asset body for one clip -> asset body for one clip or a key range of clips (see the module docstring).
    Put it under `@dg.asset`; the signature Dagster reads (context and resources) is the body's. `cost(keys,
    **resources)` weighs the clips (e.g. seconds, track frames) for a split step's two halves; without it, or when
    it fails, each clip weighs the same."""
    if fn is None:
        return functools.partial(per_clip, cost=cost)

    @functools.wraps(fn)
    def run(context: dg.AssetExecutionContext, *args, **kwargs):
        keys = _keys(context)
        if len(keys) == 1:
            return fn(context, *args, **kwargs)
        weigh = (lambda ks: cost(ks, **kwargs)) if cost else None
        return _asset_batch(context, keys, lambda c: fn(c, *args, **kwargs), weigh)

    return run


def _asset_batch(context: dg.AssetExecutionContext, keys: Sequence[str], body, weigh=None) -> Iterator[Any]:
    failed: dict[str, str] = {}
    evaluations: list[dg.AssetCheckEvaluation] = []
    checks = {k for k in context.selected_asset_check_keys}
    for key, outcome in _outcomes(context, keys, body, weigh):
        for clip, metadata, asset_key in outcome.get("recorded", ()):  # what a helper process's clip added
            partition_metadata(context, clip, metadata, asset_key)
        if "error" in outcome:
            failed[key] = outcome["error"]
            context.log.error(f"{context.assets_def.key.to_user_string()} of clip {key} failed (the batch's other "
                              f"clips go on): {failed[key]}\n{outcome['trace']}")
            partition_metadata(context, key, {STATUS: "failed", ERROR: failed[key]})
            evaluations += [_failed_evaluation(ck, key, failed[key]) for ck in checks]
            continue
        partition_metadata(context, key, {**outcome["metadata"], STATUS: "ok"})
        evaluations += outcome["evaluations"]
    if len(failed) == len(keys):
        raise dg.Failure(description=f"every clip of the batch failed: {failed}",
                         metadata={"failed": dg.MetadataValue.json(failed)})
    return _events(context, evaluations, checks, dg.MaterializeResult(metadata={
        "hvbench/batch_clips": len(keys), "hvbench/batch_failed": len(failed)}))


def _outcome(context, key: str, body, recorded: list | None = None) -> dict:
    """One clip's metadata and check evaluations, or its error text and traceback (a clip's failure never stops
    the batch); plain values and Dagster records that pickle (a helper process sends them back)."""
    try:
        result = body(OneClip(context, key, recorded))
        return {"metadata": dict(result.metadata or {}), "recorded": recorded or [],
                "evaluations": [_evaluation(cr, key, context) for cr in result.check_results or []]}
    except Exception as exc:  # noqa: BLE001 - recorded on the clip's partition by _asset_batch
        return {"error": _error_text(exc), "trace": traceback.format_exc(limit=3), "recorded": recorded or []}


def _outcomes(context, keys: Sequence[str], body, weigh=None) -> list[tuple[str, dict]]:
    """Each clip's outcome, in key order. A step tagged `hvbench/split: clips` with at least SPLIT_MIN_CLIPS clips
    on a machine with a second core hands about half of its clips (`halves`) to a process forked for them, so the
    batch's longest labels (L1, L7; their clips are independent) use both cores while later steps wait. The
    helper writes its clips' rows itself (the warehouse serializes writers), records their metadata instead of
    storing it and sends its outcomes back through a pipe; a helper that dies leaves its clips to this process.
    `_no_split` says when it is not done."""
    why = _no_split(context, keys)
    if why:
        if why is not _UNTAGGED:
            context.log.info(f"clips {keys[0]}..{keys[-1]} in one process: {why}")
        return _clip_outcomes(context, keys, body)
    mine, theirs = halves(keys, _weights(context, keys, weigh))
    flush_std_streams()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the helper: its clips, then their outcomes down the pipe
        os.close(read)
        code = 0
        try:
            die_with_parent()
            data = pickle.dumps(_clip_outcomes(context, theirs, body, helper=True))
        except BaseException:  # noqa: BLE001 - the parent runs these clips itself
            data, code = b"", 1
        try:
            with os.fdopen(write, "wb") as pipe:
                pipe.write(data)
        finally:
            flush_std_streams()
            os._exit(code)
    os.close(write)
    context.log.info(f"clips {', '.join(theirs)} in a helper process (pid {pid}); {', '.join(mine)} here")
    with os.fdopen(read, "rb") as pipe:
        try:
            outcomes = _clip_outcomes(context, mine, body)
            data = pipe.read()  # the helper blocks on a full pipe until this read: no deadlock
        except BaseException:  # the run is being stopped: so is the helper
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
    os.waitpid(pid, 0)
    try:
        helped = pickle.loads(data) if data else None
    except Exception:  # noqa: BLE001 - a truncated message: the helper died while writing
        helped = None
    if helped is None or [k for k, _ in helped] != theirs:
        context.log.warning(f"the helper process for clips {', '.join(theirs)} ended without their results; "
                            "running them here")
        helped = _clip_outcomes(context, theirs, body)
    order = {k: i for i, k in enumerate(keys)}
    return sorted(outcomes + helped, key=lambda kv: order[kv[0]])


def _clip_outcomes(context, keys: Sequence[str], body, helper: bool = False) -> list[tuple[str, dict]]:
    """`_outcome` of each clip, in order, with the clips' warehouse writes committed together at the end
    (core/warehouse/grouped.py: one commit per step instead of one per clip and table). A clip whose own rows fail
    to commit fails like a clip whose body raised. `helper`: metadata is recorded to be handed back."""
    outcomes = []
    with grouped_writes() as group:
        for key in keys:
            group.owner = key
            outcomes.append((key, _outcome(context, key, body, recorded=[] if helper else None)))
        group.owner = None
    return [(key, {"error": f"its rows were not written: {group.failed[key]}", "trace": "",
                   "recorded": outcome.get("recorded", [])} if key in group.failed else outcome)
            for key, outcome in outcomes]


def halves(keys: Sequence[str], weights: Mapping[str, float]) -> tuple[list[str], list[str]]:
    """Two non-empty sets of clips of about equal weight (heaviest first, each to the lighter side), each in key
    order; the first stays in the step's process. Halves by count had put 16.5 of a batch's 29.8 s in one.
    Without weights: the first and the second half of the keys."""
    if not weights:
        cut = (len(keys) + 1) // 2
        return list(keys[:cut]), list(keys[cut:])
    sides: tuple[list[str], list[str]] = ([], [])
    load = [0.0, 0.0]
    for k in sorted(keys, key=lambda k: -weights.get(k, 1.0)):
        i = 0 if load[0] <= load[1] else 1
        sides[i].append(k)
        load[i] += weights.get(k, 1.0)
    if not sides[1]:
        sides[1].append(sides[0].pop())
    order = {k: i for i, k in enumerate(keys)}
    return sorted(sides[0], key=order.get), sorted(sides[1], key=order.get)


def _weights(context, keys: Sequence[str], weigh) -> Mapping[str, float]:
    """The clips' weights; a clip it misses weighs their mean, and a failing estimate weighs them all alike."""
    if weigh is None:
        return {}
    try:
        known = {k: float(v) for k, v in weigh(keys).items() if k in keys and v and v > 0}
    except Exception as exc:  # noqa: BLE001 - an estimate never fails the batch
        context.log.warning(f"clip weights for the split unavailable ({type(exc).__name__}: {exc}); halves by count")
        return {}
    mean = sum(known.values()) / len(known) if known else 1.0
    return {k: known.get(k, mean) for k in keys}


_UNTAGGED = "the step is not tagged for it"


def _no_split(context, keys: Sequence[str]) -> str | None:
    """Why this step keeps all its clips (None: it splits them). A run tagged `hvbench/split: off` splits nothing
    (the helper needs 0.3-0.4 GB more). An op tagged `hvbench/split_fresh: <runtime>` splits only before that
    native runtime ran here: yuface's OpenMP crashed (SIGSEGV) in a helper forked from a process that had used it,
    so L1 splits in a run worker (its first detection) but not in a process that detected faces before. Nor
    after CUDA was initialized here (a forked child cannot use it), nor from a process holding DuckLake, nor in a
    step's forked child (L7 beside the task steps: the run's process keeps the other core busy)."""
    tags = getattr(getattr(context, "op_def", None), "tags", None) or {}
    if tags.get(SPLIT_TAG) != "clips":
        return _UNTAGGED
    if len(keys) < SPLIT_MIN_CLIPS or machine_cores() < 2:
        return _UNTAGGED  # the usual case for a short range or a one-core machine: nothing to report
    if _run_tags(context).get(SPLIT_TAG) == "off":
        return f"the run is tagged {SPLIT_TAG}=off"
    if forked_step():
        # the run's process computes its other steps meanwhile, so both cores are busy already; a helper only added a
        # third process and a second model load (L7 of 8 short clips: 10.5-11.2 s alone against 11 s split, ~4 CPU-s less)
        return "the step runs in a process forked beside the run's own, which computes the other steps meanwhile"
    fresh = tags.get(SPLIT_FRESH_TAG)
    if fresh and has_run(fresh):
        return f"{fresh} already ran in this process (pid {os.getpid()}); a forked helper could not use it"
    if _cuda_initialized():
        return "CUDA is initialized in this process; a forked helper could not use it"
    if not fork_safe():
        return "this process holds an attached DuckLake catalog"
    return None


def _run_tags(context) -> dict:
    try:
        return dict(context.run.tags)
    except Exception:  # noqa: BLE001 - a context without a run (direct invocation)
        return {}


def _cuda_initialized() -> bool:
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def _events(context, evaluations, checks, last) -> Iterator[Any]:
    yield from evaluations
    for key in checks:  # the check outputs themselves (their results are the per-partition evaluations)
        yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(key))
    if last is not None:
        yield last


def _evaluation(result: dg.AssetCheckResult, key: str, context) -> dg.AssetCheckEvaluation:
    check_key = dg.AssetCheckKey(dg.AssetKey.from_coercible(result.asset_key or context.assets_def.key),
                                 result.check_name or next(iter(context.selected_asset_check_keys)).name)
    return dg.AssetCheckEvaluation(asset_key=check_key.asset_key, check_name=check_key.name, passed=result.passed,
                                   metadata=result.metadata, severity=result.severity,
                                   description=result.description, partition=key)


def _failed_evaluation(check_key: dg.AssetCheckKey, key: str, error: str) -> dg.AssetCheckEvaluation:
    return dg.AssetCheckEvaluation(asset_key=check_key.asset_key, check_name=check_key.name, passed=False,
                                   metadata={ERROR: dg.MetadataValue.text(error)},
                                   severity=dg.AssetCheckSeverity.ERROR, partition=key,
                                   description=f"the asset failed for this clip: {error}")


def per_clip_check(fn: Callable[..., dg.AssetCheckResult]) -> Callable[..., Any]:
    """Asset check body for one clip -> for one clip or a key range (one evaluation per clip and partition)."""

    @functools.wraps(fn)
    def run(context: dg.AssetCheckExecutionContext, *args, **kwargs):
        keys = _keys(context)
        if len(keys) == 1:
            return fn(context, *args, **kwargs)
        checks = set(context.selected_asset_check_keys)
        (check_key,) = checks
        evaluations = []
        for key in keys:
            try:
                result = fn(OneClip(context, key), *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - as for assets: recorded on the clip's partition
                context.log.error(f"check {check_key.name} of clip {key} failed: {_error_text(exc)}")
                evaluations.append(_failed_evaluation(check_key, key, _error_text(exc)))
                continue
            evaluations.append(dg.AssetCheckEvaluation(
                asset_key=check_key.asset_key, check_name=check_key.name, passed=result.passed,
                metadata=result.metadata, severity=result.severity, description=result.description, partition=key))
        return _events(_CheckOutputs(context), evaluations, checks, None)

    return run


class _CheckOutputs:
    """`assets_def` of a standalone check step (its output names), as _events reads it."""

    def __init__(self, context: dg.AssetCheckExecutionContext):
        self.assets_def = context.op_execution_context.assets_def

"""The machine-sized executor on a real instance: one process per run, the `cpu` pool limit, multiprocess on
request, which assets share the pool, and what loading the definitions imports."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dagster as dg
import pytest

from hvbench_assets.runtime.executor import CPU_POOL, cpu_pool_limit, machine_cores, machine_sized_executor

CPU_HEAVY = {"scene_clips", "human_tracks", "human_verdicts", "demographics", "audio_tags", "transcript", "speech_emotion",
             "voice_demographics", "speaker_frame_scores"}


@dg.asset
def first() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


@dg.asset(deps=[first], pool=CPU_POOL)
def left() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


@dg.asset(deps=[first], pool=CPU_POOL)
def right() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


def small_job() -> dg.JobDefinition:
    defs = dg.Definitions(assets=[first, left, right], executor=machine_sized_executor,
                          jobs=[dg.define_asset_job("small", selection="*")])
    return defs.resolve_job_def("small")


def _pids(instance: dg.DagsterInstance) -> dict[str, int]:
    out = {}
    for key in ("first", "left", "right"):
        event = instance.get_latest_materialization_event(dg.AssetKey(key))
        out[key] = int(event.asset_materialization.metadata["pid"].value)
    return out


def _engine_messages(result) -> str:
    return "\n".join(e.message or "" for e in result.all_events if e.event_type == dg.DagsterEventType.ENGINE_EVENT)


@pytest.fixture
def instance(dagster_home):
    # the project's pool settings: a default limit for pools nobody configured
    (dagster_home / "dagster.yaml").write_text(
        "telemetry:\n  enabled: false\nconcurrency:\n  pools:\n    default_limit: 1\n    granularity: op\n")
    with dg.DagsterInstance.get() as inst:
        yield inst


def test_a_run_executes_its_steps_in_its_own_process_and_sizes_the_cpu_pool(instance):
    result = dg.execute_job(dg.reconstructable(small_job), instance=instance)
    assert result.success
    assert "steps in this process" in _engine_messages(result)
    assert set(_pids(instance).values()) == {os.getpid()}
    limits = {p.name: p for p in instance.event_log_storage.get_pool_limits()}
    assert limits[CPU_POOL].limit == machine_cores() and not limits[CPU_POOL].from_default


def test_a_run_among_others_says_so(instance):
    busy = instance.create_run_for_job(small_job(), status=dg.DagsterRunStatus.STARTED)  # another run computing
    result = dg.execute_job(dg.reconstructable(small_job), instance=instance)
    assert result.success
    assert "1 other run(s) queued or in progress" in _engine_messages(result)
    assert instance.get_run_by_id(busy.run_id).status == dg.DagsterRunStatus.STARTED


def test_run_config_can_still_choose_multiprocess(instance):
    config = {"execution": {"config": {"multiprocess": {}}}}
    assert dg.execute_job(dg.reconstructable(small_job), instance=instance, run_config=config).success
    pids = _pids(instance)
    assert os.getpid() not in pids.values() and len(set(pids.values())) == 3


def test_cpu_pool_limit_follows_the_cores_unless_set_on_the_instance(instance):
    storage = instance.event_log_storage
    storage.initialize_concurrency_limit_to_default(CPU_POOL)  # what the run queue does for an unknown pool
    assert cpu_pool_limit(instance, cores=3) == 3
    storage.set_concurrency_slots(CPU_POOL, 5)  # `dagster instance concurrency set cpu 5`
    assert cpu_pool_limit(instance, cores=3) == 5
    assert {p.name: p.limit for p in storage.get_pool_limits()}[CPU_POOL] == 5


def test_cpu_heavy_assets_share_the_cpu_pool_and_every_job_uses_the_executor():
    from hvbench_assets.definitions import defs

    d = defs()
    repo = d.get_repository_def()
    graph = repo.asset_graph
    pooled = {k.to_user_string() for k in graph.get_all_asset_keys() if CPU_POOL in (graph.get(k).pools or set())}
    assert pooled == CPU_HEAVY
    assert {j.executor_def.name for j in repo.get_all_jobs()} == {"machine_sized"}


def test_loading_the_definitions_imports_no_model_library():
    """Every process that loads the code (daemon, code server, run worker, forkserver) pays for what the
    definitions import: model libraries are imported inside the steps that use them."""
    import subprocess
    import sys

    heavy = ["torch", "onnxruntime", "dlib", "pocketsphinx", "yuface", "transformers", "funasr", "deepface",
             "ultralytics", "silero_vad", "scipy", "sklearn"]
    code = ("import sys; from hvbench_assets.definitions import defs; defs(); "
            f"print(','.join(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    assert out.stdout.strip().splitlines()[-1:] in ([], [""]), f"imported when loading the definitions: {out.stdout}"


# --- forked steps: a step tagged hvbench/process=fork overlaps the steps the run's process computes

from hvbench_assets.runtime.executor import FORK_TAG  # noqa: E402

FORK = {FORK_TAG: "fork"}


@dg.asset(deps=[first], op_tags=FORK)
def forked(context) -> dg.MaterializeResult:
    context.log.info("forked step says hello")
    mode = os.environ.get("HVBENCH_TEST_FORKED", "ok")
    if mode == "raise":
        raise dg.Failure(description="the forked step failed on purpose")
    if mode == "crash":
        os._exit(3)  # the process dies without recording an outcome
    from hvbench_assets.runtime.executor import forked_step

    return dg.MaterializeResult(metadata={"pid": os.getpid(), "forked_step": forked_step() or ""})


@dg.asset(deps=[forked])
def after_forked() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


@dg.asset(deps=[first])
def beside() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


def fork_job() -> dg.JobDefinition:
    defs = dg.Definitions(assets=[first, forked, after_forked, beside], executor=machine_sized_executor,
                          jobs=[dg.define_asset_job("forking", selection="*")])
    return defs.resolve_job_def("forking")


def _step_events(instance, run_id: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rec in instance.all_logs(run_id):
        ev = rec.dagster_event
        if ev is not None and ev.step_key:
            out.setdefault(ev.step_key, []).append(ev.event_type_value)
    return out


def _pid_of(instance, key: str) -> int:
    return int(instance.get_latest_materialization_event(dg.AssetKey(key)).asset_materialization.metadata["pid"].value)


@pytest.mark.skipif(machine_cores() < 2, reason="a forked step needs a second core")
def test_a_forked_step_runs_in_a_child_with_its_own_events(instance, monkeypatch):
    monkeypatch.setenv("HVBENCH_TEST_FORKED", "ok")
    result = dg.execute_job(dg.reconstructable(fork_job), instance=instance)
    assert result.success
    assert "Forked step forked into process" in _engine_messages(result)
    child = _pid_of(instance, "forked")
    assert child != os.getpid()
    # the child knows which step it was forked for (a batch step there keeps its clips in one process: test_clip_batches)
    meta = instance.get_latest_materialization_event(dg.AssetKey("forked")).asset_materialization.metadata
    assert meta["forked_step"].value == "forked"
    assert {_pid_of(instance, k) for k in ("first", "after_forked", "beside")} == {os.getpid()}
    events = _step_events(instance, result.run_id)
    for key in ("forked", "after_forked", "beside"):
        ran = [e for e in events[key] if e.startswith(("STEP_", "ASSET_MATERIALIZATION"))
               and e != "ASSET_MATERIALIZATION_PLANNED"]
        assert ran == ["STEP_START", "STEP_OUTPUT", "ASSET_MATERIALIZATION", "STEP_SUCCESS"], (key, events[key])
    logs = [r.user_message for r in instance.all_logs(result.run_id) if r.step_key == "forked" and not r.dagster_event]
    assert "forked step says hello" in logs
    assert not list(Path(tempfile.gettempdir()).glob("hvbench-step-forked-*.events"))  # the hand-over file is gone


@pytest.mark.skipif(machine_cores() < 2, reason="a forked step needs a second core")
@pytest.mark.parametrize("mode", ["raise", "crash"])
def test_a_failing_forked_step_fails_alone(instance, monkeypatch, mode):
    monkeypatch.setenv("HVBENCH_TEST_FORKED", mode)
    result = dg.execute_job(dg.reconstructable(fork_job), instance=instance, raise_on_error=False)
    assert not result.success
    events = _step_events(instance, result.run_id)
    assert events["forked"][-1] == "STEP_FAILURE"
    assert "STEP_START" not in events["after_forked"]  # abandoned: its upstream failed
    assert events["beside"][-1] == "STEP_SUCCESS" and events["first"][-1] == "STEP_SUCCESS"
    failure = next(r for r in instance.all_logs(result.run_id)
                   if r.dagster_event and r.dagster_event.is_step_failure).dagster_event.step_failure_data.error
    expected = "failed on purpose" if mode == "raise" else "exited with code 3"
    assert expected in failure.to_string() or expected in str(failure.message), failure
    assert _pid_of(instance, "beside") == os.getpid()  # the run's process went on


@dg.asset(deps=[first])
def a_heavy() -> None:
    """Computes in the run's process and leads to a forkable step, so it is taken early, but not before a
    forkable step that is ready now: the loop would wait for it before forking anything."""


@dg.asset(deps=[a_heavy], op_tags=FORK)
def a_heavy_forked() -> None:
    pass


@dg.asset(deps=[first], op_tags=FORK)
def z_forked() -> None:
    pass


def lead_job() -> dg.JobDefinition:
    defs = dg.Definitions(assets=[first, a_heavy, a_heavy_forked, z_forked], executor=machine_sized_executor,
                          jobs=[dg.define_asset_job("leading", selection="*")])
    return defs.resolve_job_def("leading")


@pytest.mark.skipif(machine_cores() < 2, reason="a forked step needs a second core")
def test_a_ready_forkable_step_is_forked_before_in_process_steps_start(instance):
    result = dg.execute_job(dg.reconstructable(lead_job), instance=instance)
    assert result.success
    order = [r.dagster_event.step_key if r.dagster_event.is_step_start else f"fork {r.dagster_event.step_key}"
             for r in instance.all_logs(result.run_id)
             if r.dagster_event and (r.dagster_event.is_step_start or "Forked step" in (r.user_message or ""))]
    assert order.index("fork z_forked") < order.index("a_heavy"), order


@dg.asset(deps=[first])
def a_verdict_like() -> None:
    """Only a cheap forkable step waits for it (as the task steps wait for the verdicts)."""


@dg.asset(deps=[a_verdict_like], op_tags=FORK)
def a_cheap_task() -> None:
    pass


@dg.asset(deps=[first])
def b_heavy_input() -> None:
    """A heavy forkable step (`cpu` pool, as L7) waits for it: taken before `a_verdict_like`."""


@dg.asset(deps=[b_heavy_input], op_tags=FORK, pool=CPU_POOL)
def b_heavy_label() -> None:
    pass


def heavy_lead_job() -> dg.JobDefinition:
    defs = dg.Definitions(assets=[first, a_verdict_like, a_cheap_task, b_heavy_input, b_heavy_label],
                          executor=machine_sized_executor, jobs=[dg.define_asset_job("heavy_lead", selection="*")])
    return defs.resolve_job_def("heavy_lead")


def test_the_steps_a_heavy_forkable_step_waits_for_are_taken_first(instance):
    """Of the ready steps that lead to forkable ones, those upstream of a `cpu`-pool forkable step go first (after
    L1 the verdicts, read only by task steps, had run before L7's inputs and held L7 back)."""
    result = dg.execute_job(dg.reconstructable(heavy_lead_job), instance=instance)
    assert result.success
    order = [r.dagster_event.step_key for r in instance.all_logs(result.run_id)
             if r.dagster_event and r.dagster_event.is_step_start]
    assert order.index("b_heavy_input") < order.index("a_verdict_like"), order


def _marker() -> Path:
    return Path(os.environ["HVBENCH_TEST_MARKER"])


@dg.asset(deps=[first], op_tags={**FORK, "dagster/priority": "1"})  # taken first, so it gets the child slot
def cheap_forked() -> dg.MaterializeResult:
    _marker().write_text(str(os.getpid()))
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


@dg.asset(deps=[first], op_tags=FORK, pool=CPU_POOL)
def heavy_forked() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


@dg.asset(deps=[first])
def plain() -> dg.MaterializeResult:
    """Returns once cheap_forked's process has ended (a zombie until the run's loop reaps it), so the child slot
    is free again when the loop looks for its next step."""
    import time

    deadline = time.time() + 120
    while time.time() < deadline:
        if _marker().exists() and _marker().read_text():
            stat = Path(f"/proc/{_marker().read_text()}/stat")
            if not stat.exists() or stat.read_text().split(") ")[-1].startswith("Z"):
                break
        time.sleep(0.05)
    return dg.MaterializeResult(metadata={"pid": os.getpid()})


def waiting_job() -> dg.JobDefinition:
    defs = dg.Definitions(assets=[first, cheap_forked, heavy_forked, plain], executor=machine_sized_executor,
                          jobs=[dg.define_asset_job("waiting", selection="*")])
    return defs.resolve_job_def("waiting")


@pytest.mark.skipif(machine_cores() < 2 or not Path("/proc/self/stat").exists(),
                    reason="a forked step needs a second core (and the test reads /proc)")
def test_a_forkable_step_waits_for_the_busy_child_slot_while_others_run_here(instance, monkeypatch, tmp_path):
    """The slot is taken by a cheap forked step: the heavy one must not run in the run's process (it did, and held
    up every other step for as long as it computed); `plain` runs here meanwhile, then the heavy one is forked."""
    monkeypatch.setenv("HVBENCH_TEST_MARKER", str(tmp_path / "cheap.pid"))
    result = dg.execute_job(dg.reconstructable(waiting_job), instance=instance)
    assert result.success
    run = os.getpid()
    assert _pid_of(instance, "plain") == run
    assert _pid_of(instance, "cheap_forked") != run
    assert _pid_of(instance, "heavy_forked") not in (run, _pid_of(instance, "cheap_forked"))


def test_a_step_waiting_for_a_pool_slot_does_not_spin_the_run_process(instance, monkeypatch):
    """Dagster's ActiveExecution.sleep_interval() is never positive while a pool claim is pending, so its
    sleep_til_ready() returned at once and the run's loop spun a core while `left` and `right` waited for the `cpu`
    slot another run held (4 runs on 2 cores used 1.5x the CPU of running them in turn). Counted, not timed: the
    loop asks for its next step at most ~20 times a second while it waits."""
    import threading
    import time

    from dagster._core.execution.plan.active import ActiveExecution

    storage = instance.event_log_storage
    storage.set_concurrency_slots(CPU_POOL, 1)  # set on the instance: the executor keeps it
    assert storage.claim_concurrency_slot(CPU_POOL, "other-run", "other-step").is_claimed
    held_s = 2.0

    def other_run_ends() -> None:  # its own instance: no storage connection crosses threads
        with dg.DagsterInstance.get() as other:
            other.event_log_storage.free_concurrency_slots_for_run("other-run")

    timer = threading.Timer(held_s, other_run_ends)
    calls = []
    real = ActiveExecution.get_steps_to_execute

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ActiveExecution, "get_steps_to_execute", counted)
    timer.start()
    t0 = time.monotonic()
    try:
        result = dg.execute_job(dg.reconstructable(small_job), instance=instance)
    finally:
        timer.cancel()
        timer.join()
        storage.free_concurrency_slots_for_run("other-run")
    assert result.success
    assert time.monotonic() - t0 >= held_s  # it did wait for the slot
    assert len(calls) < 40 * (time.monotonic() - t0) + 50, len(calls)


def _affinity() -> dict:
    return {"pid": os.getpid(), "cores": sorted(os.sched_getaffinity(0))}


@dg.asset(deps=[first], op_tags=FORK, pool=CPU_POOL)
def c_heavy_child(context) -> dg.MaterializeResult:
    """Computes (here: waits) until `c_side` has looked at its cores, so both run at once."""
    import time

    deadline = time.time() + 60
    while time.time() < deadline and not _marker().exists():
        time.sleep(0.02)
    return dg.MaterializeResult(metadata=_affinity())


@dg.asset(deps=[first])
def c_feeds_heavy() -> dg.MaterializeResult:
    """A heavy forkable step waits for it (as L7's frame scores wait for L1): every core."""
    return dg.MaterializeResult(metadata=_affinity())


@dg.asset(deps=[c_feeds_heavy], op_tags=FORK, pool=CPU_POOL)
def c_heavy_later() -> None:
    pass


@dg.asset(deps=[first])
def c_side() -> dg.MaterializeResult:
    """No heavy forkable step waits for it (as L3 or a task question beside L7): leaves the child its core."""
    import threading

    seen: list = []
    thread = threading.Thread(target=lambda: seen.append(sorted(os.sched_getaffinity(0))))  # a new thread too
    thread.start()
    thread.join()
    meta = {**_affinity(), "thread_cores": seen[0]}
    _marker().write_text("done")
    return dg.MaterializeResult(metadata=meta)


def cores_job() -> dg.JobDefinition:
    defs = dg.Definitions(assets=[first, c_heavy_child, c_feeds_heavy, c_heavy_later, c_side],
                          executor=machine_sized_executor, jobs=[dg.define_asset_job("cores", selection="*")])
    return defs.resolve_job_def("cores")


@pytest.mark.skipif(machine_cores() < 2 or not hasattr(os, "sched_setaffinity"),
                    reason="narrowing to the cores a forked child leaves needs a second core (and Linux)")
def test_steps_no_heavy_child_waits_for_leave_it_its_core(instance, monkeypatch, tmp_path):
    monkeypatch.setenv("HVBENCH_TEST_MARKER", str(tmp_path / "side.done"))
    every = sorted(os.sched_getaffinity(0))
    result = dg.execute_job(dg.reconstructable(cores_job), instance=instance)
    assert result.success

    def meta(key):
        m = instance.get_latest_materialization_event(dg.AssetKey(key)).asset_materialization.metadata
        return {k: v.value for k, v in m.items()}

    child, side, feeds = meta("c_heavy_child"), meta("c_side"), meta("c_feeds_heavy")
    assert child["pid"] != os.getpid() and child["cores"] == every  # the child may use every core
    assert side["pid"] == os.getpid() and len(side["cores"]) == len(every) - 1  # one left to the child
    assert side["thread_cores"] == side["cores"]  # threads started meanwhile too
    assert feeds["cores"] == every  # on the way to a heavy step: not narrowed
    assert sorted(os.sched_getaffinity(0)) == every  # restored when the run ends
    assert machine_cores() == len(every)

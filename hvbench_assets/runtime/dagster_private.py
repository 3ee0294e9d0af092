"""Every private Dagster name hvbench uses, in one place, each with what it is for and why no public API serves.

Checked against Dagster DAGSTER_CHECKED (constraints.txt pins it). Nothing else in the package, its testkit or
benchmarks/ imports `dagster._…` (hvbench_assets_tests/runtime/test_dagster_private.py checks both: that every name
below resolves, and that nobody else reaches in). Names are imported on first use, as their modules were before:
`from hvbench_assets.runtime.dagster_private import ActiveExecution` costs what the direct import cost. After a
Dagster upgrade, a name that moved fails with an ImportError naming it, the version checked and its purpose.
"""

from __future__ import annotations

import importlib
import sys

DAGSTER_CHECKED = "1.13.27"

_EXECUTOR = "the machine-sized executor (runtime/executor.py) schedules a run's steps itself, forking some; " \
            "Dagster's public executor API defines an executor but not how to execute a plan's steps"
_STORAGE = "the pooled SQLite event log (runtime/instance.py) is Dagster's SQLite storage with open connections; " \
           "Dagster exposes no public storage base classes"
_TICKS = "the demo ticks sensors as the daemon does (runtime/sensor_ticks.py); no public API evaluates and " \
         "records a tick outside the daemon"
_WORKSPACE = "tests and benchmarks load a workspace and launch runs on it as the webserver does"

# name: (module, attribute or None for the module itself, why)
PRIVATE: dict[str, tuple[str, str | None, str]] = {
    "IN_PROC_CONFIG": ("dagster._core.definitions.executor_definition", "IN_PROC_CONFIG",
                       "the in_process option's config, offered unchanged by the machine-sized executor"),
    "MULTI_PROC_CONFIG": ("dagster._core.definitions.executor_definition", "MULTI_PROC_CONFIG",
                          "the multiprocess option's config, offered unchanged"),
    "_core_in_process_executor_creation": ("dagster._core.definitions.executor_definition",
                                           "_core_in_process_executor_creation", "builds the in_process option"),
    "_core_multiprocess_executor_creation": ("dagster._core.definitions.executor_definition",
                                             "_core_multiprocess_executor_creation", "builds the multiprocess option"),
    "EngineEventData": ("dagster._core.events", "EngineEventData", "engine events of forked steps: " + _EXECUTOR),
    "JobFailureData": ("dagster._core.events", "JobFailureData",
                       "`hvbench runs --fail-dead` records why a dead run failed, as the run monitor does"),
    "RunFailureReason": ("dagster._core.events", "RunFailureReason", "as JobFailureData"),
    "ExecuteRunWithPlanIterable": ("dagster._core.execution.api", "ExecuteRunWithPlanIterable",
                                   "a forked step's child executes its step of the plan: " + _EXECUTOR),
    "PlanExecutionContextManager": ("dagster._core.execution.context_creation_job", "PlanExecutionContextManager",
                                    "the child's execution context, as the multiprocess executor builds it"),
    "ActiveExecution": ("dagster._core.execution.plan.active", "ActiveExecution",
                        "which steps are ready, skipped or done: " + _EXECUTOR),
    "_trigger_hook": ("dagster._core.execution.plan.execute_plan", "_trigger_hook", "a step's hooks, as in process"),
    "dagster_event_sequence_for_step": ("dagster._core.execution.plan.execute_plan", "dagster_event_sequence_for_step",
                                        "executes one step, as the in-process executor does"),
    "InstanceConcurrencyContext": ("dagster._core.execution.plan.instance_concurrency_context",
                                   "InstanceConcurrencyContext", "pool slots per step (the `cpu` pool)"),
    "create_compute_log_file_key": ("dagster._core.execution.compute_logs", "create_compute_log_file_key",
                                    "one compute log per run process, as the in-process executor opens it"),
    "RetryMode": ("dagster._core.execution.retries", "RetryMode", "the executor's retry setting"),
    "SerializableErrorInfo": ("dagster._utils.error", "SerializableErrorInfo", "a forked step's failure"),
    "get_run_crash_explanation": ("dagster._utils", "get_run_crash_explanation",
                                  "the message when a forked step's process dies"),
    "InstanceRef": ("dagster._core.instance.ref", "InstanceRef", "the instance's default storage: " + _STORAGE),
    "SqliteEventLogStorage": ("dagster._core.storage.event_log.sqlite.sqlite_event_log", "SqliteEventLogStorage",
                              _STORAGE),
    "INDEX_SHARD_NAME": ("dagster._core.storage.event_log.sqlite.sqlite_event_log", "INDEX_SHARD_NAME",
                         "the same index file as Dagster's"),
    "SQLITE_BUSY_TIMEOUT_SECONDS": ("dagster._core.storage.event_log.sqlite.sqlite_event_log",
                                    "SQLITE_BUSY_TIMEOUT_SECONDS", "the same lock wait as Dagster's"),
    "SqliteRunStorage": ("dagster._core.storage.runs.sqlite.sqlite_run_storage", "SqliteRunStorage", _STORAGE),
    "SqliteScheduleStorage": ("dagster._core.storage.schedules.sqlite.sqlite_schedule_storage",
                              "SqliteScheduleStorage", _STORAGE),
    "DagsterSqliteStorage": ("dagster._core.storage.sqlite_storage", "DagsterSqliteStorage", _STORAGE),
    "_event_logs_directory": ("dagster._core.storage.sqlite_storage", "_event_logs_directory", "Dagster's folders"),
    "_runs_directory": ("dagster._core.storage.sqlite_storage", "_runs_directory", "Dagster's folders"),
    "_schedule_directory": ("dagster._core.storage.sqlite_storage", "_schedule_directory", "Dagster's folders"),
    "ConfigurableClassData": ("dagster._serdes", "ConfigurableClassData", "names the pooled storage classes"),
    "daemon_controller": ("dagster._daemon.controller", None,
                          "the backfill daemon's loop interval (DEFAULT_DAEMON_INTERVAL_SECONDS, no setting)"),
    "InstigatorType": ("dagster._core.definitions.run_request", "InstigatorType", _TICKS),
    "InProcessCodeLocationOrigin": ("dagster._core.remote_origin", "InProcessCodeLocationOrigin", _TICKS),
    "SensorExecutionData": ("dagster._core.definitions.sensor_definition", "SensorExecutionData", _TICKS),
    "InstigatorState": ("dagster._core.scheduler.instigation", "InstigatorState", _TICKS),
    "InstigatorStatus": ("dagster._core.scheduler.instigation", "InstigatorStatus", _TICKS),
    "SensorInstigatorData": ("dagster._core.scheduler.instigation", "SensorInstigatorData", _TICKS),
    "TickData": ("dagster._core.scheduler.instigation", "TickData", _TICKS),
    "TickStatus": ("dagster._core.scheduler.instigation", "TickStatus", _TICKS),
    "RUN_KEY_TAG": ("dagster._core.storage.tags", "RUN_KEY_TAG", "runs a tick requests carry the daemon's tags"),
    "SENSOR_NAME_TAG": ("dagster._core.storage.tags", "SENSOR_NAME_TAG", "as RUN_KEY_TAG"),
    "LoadableTargetOrigin": ("dagster._core.types.loadable_target_origin", "LoadableTargetOrigin", _TICKS),
    "SensorLaunchContext": ("dagster._daemon.sensor", "SensorLaunchContext", _TICKS),
    "_handle_dynamic_partitions_requests": ("dagster._daemon.sensor", "_handle_dynamic_partitions_requests", _TICKS),
    "fetch_existing_runs": ("dagster._daemon.sensor", "fetch_existing_runs", _TICKS),
    "mark_sensor_state_for_tick": ("dagster._daemon.sensor", "mark_sensor_state_for_tick", _TICKS),
    "DagsterGrpcClient": ("dagster._grpc.client", "DagsterGrpcClient", "tests wait for a code server to answer"),
    "WorkspaceProcessContext": ("dagster._core.workspace.context", "WorkspaceProcessContext", _WORKSPACE),
    "WorkspaceFileTarget": ("dagster._core.workspace.load_target", "WorkspaceFileTarget", _WORKSPACE),
    "_create_run": ("dagster._cli.job", "_create_run", _WORKSPACE + " (`dagster job launch`'s own step)"),
    "WorkspaceOpts": ("dagster._cli.workspace.cli_target", "WorkspaceOpts", _WORKSPACE),
    "get_workspace_from_cli_opts": ("dagster._cli.workspace.cli_target", "get_workspace_from_cli_opts", _WORKSPACE),
    "get_code_location_from_workspace": ("dagster._cli.workspace.cli_target", "get_code_location_from_workspace",
                                         _WORKSPACE),
    "get_remote_repository_from_code_location": ("dagster._cli.workspace.cli_target",
                                                 "get_remote_repository_from_code_location", _WORKSPACE),
    "get_remote_job_from_remote_repo": ("dagster._cli.workspace.cli_target", "get_remote_job_from_remote_repo",
                                        _WORKSPACE),
}

# Modules named by string, never imported here (importing them would change what they tell):
CODE_SERVER_MODULE = "dagster._grpc.server"  # loaded only in a code server: its DagsterApiServer starts run workers
RUN_WORKER_MODULE = "dagster._grpc.impl"  # what a run worker imports first; the preloaded fork server imports it
PRIVATE_MODULES = {
    CODE_SERVER_MODULE: "runtime/run_workers.py gives DagsterApiServer's StartRun a start method (its `_mp_ctx`); "
                        "Dagster offers no setting for how run workers start",
    RUN_WORKER_MODULE: "runtime/run_workers.py preloads it in the fork server",
}


def __getattr__(name: str):
    if name not in PRIVATE:
        raise AttributeError(f"{__name__} lists no Dagster name {name!r}: add it to PRIVATE with its reason")
    module, attr, why = PRIVATE[name]
    try:
        value = importlib.import_module(module)
        value = getattr(value, attr) if attr else value
    except (ImportError, AttributeError) as e:
        import dagster

        raise ImportError(f"Dagster {dagster.__version__} has no {module}{'.' + attr if attr else ''} (hvbench checked "
                          f"it with Dagster {DAGSTER_CHECKED}; used for: {why})") from e
    globals()[name] = value
    return value


def code_server_class():
    """Dagster's code server class when this process is a code server (its module already loaded), else None."""
    module = sys.modules.get(CODE_SERVER_MODULE)
    return getattr(module, "DagsterApiServer", None) if module else None

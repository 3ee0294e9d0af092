"""The sensor daemon's own iteration (`execute_sensor_iteration`, what `dagster dev` runs every few seconds) on
the DAGSTER_HOME instance, with the code location loaded from the project's workspace.yaml as `dagster dev`
loads it (a code server process)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from dagster._core.definitions.run_request import InstigatorType
from dagster._core.scheduler.instigation import SensorInstigatorData
from dagster._core.test_utils import create_test_daemon_workspace_context, freeze_time
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster._daemon.sensor import execute_sensor_iteration
from dagster._time import get_current_datetime

from hvbench_assets.core.settings import PROJECT_ROOT


class SensorDaemon:
    """Runs one daemon iteration at a time, each a minute after the previous one (past every sensor's minimum
    interval, so every running sensor is evaluated)."""

    def __init__(self, workspace_context):
        self.context = workspace_context
        self.instance = workspace_context.instance
        self.now = get_current_datetime()

    def iterate(self) -> None:
        self.now = max(self.now, get_current_datetime()) + dt.timedelta(minutes=1)
        with freeze_time(self.now):
            list(execute_sensor_iteration(self.context, logging.getLogger("sensor_daemon_test"), None, None))

    def ticks(self, name: str) -> list:
        """The sensor's ticks, newest first."""
        state = self.state(name)
        return list(self.instance.get_ticks(state.instigator_origin_id, state.selector_id))

    def state(self, name: str):
        return next(s for s in self.instance.all_instigator_state(instigator_type=InstigatorType.SENSOR)
                    if s.instigator_name == name)

    def reset_cursor(self, name: str) -> None:
        """What `dagster sensor cursor --delete` (or clearing it in the UI) does."""
        state = self.state(name)
        data = state.instigator_data
        self.instance.update_instigator_state(state.with_data(SensorInstigatorData(
            last_tick_timestamp=data.last_tick_timestamp, last_run_key=data.last_run_key,
            min_interval=data.min_interval, cursor=None, last_tick_start_timestamp=data.last_tick_start_timestamp,
            last_sensor_start_timestamp=data.last_sensor_start_timestamp, sensor_type=data.sensor_type)))

    def run_ids(self) -> set[str]:
        return {r.run_id for r in self.instance.get_runs()}


@contextmanager
def sensor_daemon(instance: dg.DagsterInstance) -> Iterator[SensorDaemon]:
    target = WorkspaceFileTarget(paths=[str(PROJECT_ROOT / "workspace.yaml")])
    with create_test_daemon_workspace_context(target, instance) as context:
        yield SensorDaemon(context)

"""Sensor ticks evaluated in this process and recorded on the instance the way the sensor daemon records them.

`hvbench demo` runs without a daemon. Each sensor tick it takes goes through Dagster's own code path (the code
location evaluates the sensor with its stored cursor, as under `dagster dev`) and leaves what the daemon leaves:
the tick on the sensor page, the new cursor, the dynamic partitions, and runs tagged with the sensor's name and
run key. A later `dagster dev` on that instance continues from there instead of starting every sensor over.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import dagster as dg
from hvbench_assets.runtime.dagster_private import (
    RUN_KEY_TAG,
    SENSOR_NAME_TAG,
    InProcessCodeLocationOrigin,
    InstigatorState,
    InstigatorStatus,
    InstigatorType,
    LoadableTargetOrigin,
    SensorExecutionData,
    SensorInstigatorData,
    SensorLaunchContext,
    TickData,
    TickStatus,
    _handle_dynamic_partitions_requests,
    fetch_existing_runs,
    mark_sensor_state_for_tick,
)

from hvbench_assets.core.settings import PROJECT_ROOT

# the code location's name in workspace.yaml, [tool.dagster] and `dg dev` (the project's name): a sensor's stored
# state is found by location, repository and sensor name
LOCATION_NAME = "hvbench"
REPOSITORY_NAME = "__repository__"
MODULE = "hvbench_assets.definitions"
_log = logging.getLogger("hvbench.sensor_ticks")


@dataclass
class Tick:
    """One evaluation: its result, the run requests still to launch, and the runs launched for them."""

    name: str
    result: SensorExecutionData
    run_requests: list[dg.RunRequest]
    skipped: list[dg.RunRequest] = field(default_factory=list)  # run keys that already have a run
    _context: SensorLaunchContext | None = None

    def run_tags(self, request: dg.RunRequest) -> dict[str, str]:
        """The tags the daemon gives a run it launches for `request`."""
        tags = {**(request.tags or {}), SENSOR_NAME_TAG: self.name}
        if request.partition_key:
            tags["dagster/partition"] = request.partition_key
        if request.run_key:
            tags[RUN_KEY_TAG] = request.run_key
        return tags

    def launched(self, request: dg.RunRequest, run_id: str) -> None:
        self._context.add_run_info(run_id=run_id, run_key=request.run_key)


class SensorTicks:
    """The hvbench code location loaded in this process, for evaluating its sensors as the daemon does."""

    def __init__(self, instance: dg.DagsterInstance):
        self.instance = instance
        origin = InProcessCodeLocationOrigin(
            LoadableTargetOrigin(executable_path=sys.executable, module_name=MODULE,
                                 working_directory=str(PROJECT_ROOT)),
            location_name=LOCATION_NAME,
        )
        self._location = origin.create_location(instance)
        self._repository = self._location.get_repository(REPOSITORY_NAME)

    def close(self) -> None:
        self._location.cleanup()

    def __enter__(self) -> SensorTicks:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def tick(self, name: str) -> Iterator[Tick]:
        """Evaluates sensor `name` with its stored cursor and adds the partitions it asks for; the caller launches
        `Tick.run_requests` (calling `Tick.launched` for each) inside the block. On leaving it the tick, the run ids
        and the new cursor are stored; an exception in the block fails the tick and keeps the old cursor."""
        sensor = self._repository.get_sensor(name)
        instance = self.instance
        state = instance.get_instigator_state(sensor.get_remote_origin_id(), sensor.selector_id)
        if state is None:  # as the daemon creates it for a sensor running by default
            state = InstigatorState(sensor.get_remote_origin(), InstigatorType.SENSOR,
                                    InstigatorStatus.DECLARED_IN_CODE,
                                    SensorInstigatorData(min_interval=sensor.min_interval_seconds,
                                                         last_sensor_start_timestamp=datetime.now(timezone.utc).timestamp(),
                                                         sensor_type=sensor.sensor_type))
            instance.add_instigator_state(state)
        now = datetime.now(timezone.utc)
        mark_sensor_state_for_tick(instance, sensor, state, now)
        data = state.instigator_data
        tick = instance.create_tick(TickData(
            instigator_origin_id=sensor.get_remote_origin_id(), instigator_name=name,
            instigator_type=InstigatorType.SENSOR, status=TickStatus.STARTED, timestamp=now.timestamp(),
            selector_id=sensor.selector_id))
        retention = instance.get_tick_retention_settings(InstigatorType.SENSOR)
        with SensorLaunchContext(sensor, tick, instance, _log, retention) as context:
            context.add_log_key(context.log_key)
            result = self._location.get_sensor_execution_data(
                instance, sensor.handle.repository_handle, name, data.last_tick_timestamp, data.last_run_key,
                data.cursor, context.log_key, data.last_sensor_start_timestamp)
            if result.log_key:
                context.add_log_key(result.log_key)
            if result.dynamic_partitions_requests:
                _handle_dynamic_partitions_requests(result.dynamic_partitions_requests, instance, context)
            requests = list(result.run_requests or [])
            existing = fetch_existing_runs(instance, sensor, requests)  # the daemon launches a run key once
            out = Tick(name, result, [r for r in requests if r.run_key not in existing],
                       [r for r in requests if r.run_key in existing], context)
            yield out
            if context.run_count:
                context.update_state(TickStatus.SUCCESS, cursor=result.cursor)
            else:
                context.update_state(TickStatus.SKIPPED, cursor=result.cursor,
                                     skip_reason=result.skip_message or (
                                         f"{len(out.skipped)} run request(s) already launched" if out.skipped else None))

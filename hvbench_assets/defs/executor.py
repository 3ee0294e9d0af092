"""Every job's executor: steps in the run's own process, CPU-heavy ones sharing a pool sized to the machine
(hvbench_assets/runtime/executor.py)."""

import dagster as dg

from hvbench_assets.runtime.executor import machine_sized_executor


@dg.definitions
def executor() -> dg.Definitions:
    return dg.Definitions(executor=machine_sized_executor)

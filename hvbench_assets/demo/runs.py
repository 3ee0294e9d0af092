"""How the demo runs a job: in this process's instance, as the daemon would launch it, with a quiet terminal."""

from __future__ import annotations

import dagster as dg

# the run's event log (the UI) keeps every event; the terminal shows only warnings and errors
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def execute(job_fn, instance: dg.DagsterInstance, tags: dict | None = None, raise_on_error: bool = False,
            resources: dict | None = None):
    """`resources`: run config of resources for this run only (it shows on the run's page), e.g.
    {"evaluation": {"config": {"arms": "full"}}}."""
    run_config = {**QUIET, "resources": resources} if resources else QUIET
    return dg.execute_job(dg.reconstructable(job_fn), instance=instance, tags=tags, run_config=run_config,
                          raise_on_error=raise_on_error)

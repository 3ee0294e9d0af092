"""What the run workers' fork server imports once (runtime/run_workers.py): Dagster, this package and every module
the definitions load, so a forked run worker only builds the definitions."""

try:
    from hvbench_assets.definitions import defs

    defs()  # load_defs imports every module under defs/ (most of a spawned worker's start-up)
except Exception:  # noqa: BLE001 - a failure here must not stop the fork server: the worker loads and reports it
    pass

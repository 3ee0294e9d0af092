"""How hvbench's runs execute on Dagster: the machinery under the Dagster objects of defs/, one piece a module.

- executor.py: the machine-sized executor: a run's steps in its own process, some forked, CPU-heavy ones sharing
  the `cpu` pool (defs/executor.py hands it to every job);
- batch.py: several clips in one run: per-clip assets over a key range, one clip's failure recorded on its
  partition, the longest steps split with a forked helper;
- instance.py: the instance class dagster_home/dagster.yaml names: the pooled SQLite event log, a faster backfill
  loop, and run workers forked from a preloaded process (run_workers.py) in a code server;
- run_workers.py: that fork server, and the switch back to spawn once the code changes;
- sensor_ticks.py: sensor ticks evaluated in this process and recorded as the daemon records them (`hvbench demo`);
- dagster_private.py: every private Dagster name the above use, each with its reason, checked on import.
"""

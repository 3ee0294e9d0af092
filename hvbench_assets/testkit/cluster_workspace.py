"""A Dagster cluster driven from this process as its UI would (`Dagster`: stop sensors, launch runs and
backfills through GraphQL) and a multi-shot source video for its inbox: used by the two-node scenario
(hvbench_assets_tests/scale/cluster_scenario.py) and benchmarks/scale.py."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from hvbench_assets.testkit.ui_backfill import launch_backfill

LAUNCH = """
mutation($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message stack }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""


OPENED: list = []  # workspaces to close at the end, whatever happened


class Dagster:
    """The cluster's workspace loaded in this process: stops sensors and launches backfills as the UI does."""

    def __init__(self, instance, workspace: Path, location: str = "hvbench"):
        from hvbench_assets.runtime.dagster_private import WorkspaceFileTarget, WorkspaceProcessContext

        self.instance, self.location = instance, location
        self.process = WorkspaceProcessContext(instance, WorkspaceFileTarget(paths=[str(workspace)]))
        OPENED.append(self)

    def close(self) -> None:  # stops the code server it started (it would outlive the scenario otherwise)
        self.process.__exit__(None, None, None)

    def repository(self):
        ctx = self.process.create_request_context()
        return ctx.get_code_location(self.location).get_repository("__repository__")

    def stop_sensor(self, name: str) -> None:
        from dagster import DagsterInvariantViolationError

        sensor = self.repository().get_sensor(name)
        for attempt in range(5):
            try:
                self.instance.stop_sensor(sensor.get_remote_origin_id(), sensor.selector_id, sensor)
                return
            except DagsterInvariantViolationError:  # the daemon stored the sensor's state meanwhile: stop that one
                if attempt == 4:
                    raise
                time.sleep(0.5)

    def launch(self, job: str, tags: dict[str, str]) -> str:
        """Submit one run of `job` (tags such as dagster/partition) as the UI's launch button does; its run id."""
        from dagster_graphql.test.utils import execute_dagster_graphql

        params = {"selector": {"repositoryLocationName": self.location, "repositoryName": "__repository__",
                               "jobName": job},
                  "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]}}
        got = execute_dagster_graphql(self.process.create_request_context(), LAUNCH, {"executionParams": params})
        result = got.data["launchRun"]
        if result["__typename"] != "LaunchRunSuccess":
            raise RuntimeError(f"run of {job} not launched: {result}")
        return result["run"]["runId"]

    def backfill(self, job: str, partitions: list[str], assets: list[str]) -> str:
        return launch_backfill(self.process.create_request_context(), partitions, assets, job=job, location=self.location)


def multi_shot_video(path: Path, shots: int, seed: int, shot_s: float = 1.5, fps: float = 25.0,
                     size=(320, 240)) -> Path:
    """Shots on different backgrounds, each with a checkered square crossing it and a tone: the scene
    splitter cuts it into `shots` clips that pass the paper's filters (320x240, >= 1 s, moving)."""
    import cv2

    from hvbench_assets.core.media import write_video
    from hvbench_assets.core.media.encode import AUDIO_RATE

    w, h = size
    n = int(shot_s * fps)
    side = h // 3
    yy, xx = np.mgrid[0:h, 0:w]
    texture = ((xx + yy) % 64 - 32)[..., None]
    checker = ((np.indices((side, side)).sum(0) // 8) % 2).astype(bool)[..., None]

    def frames():
        for s in range(shots):
            hsv = np.zeros((h, w, 3), np.uint8)
            hsv[:] = ((seed * 97 + s * 61) % 180, 160, 90 + 40 * (s % 3))
            bg = np.clip(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(int) + texture, 0, 255).astype(np.uint8)
            for i in range(n):
                img = bg.copy()
                frac = i / (n - 1) if s % 2 == 0 else 1 - i / (n - 1)
                x = int((w - side) * frac)
                img[h // 2 - side // 2: h // 2 - side // 2 + side, x: x + side] = np.where(checker, 255, 0)
                yield img

    t = np.arange(int(shots * shot_s * AUDIO_RATE)) / AUDIO_RATE
    return write_video(path, frames(), fps=fps, audio=(0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32))

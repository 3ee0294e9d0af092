"""L1's face models in a child process, called asynchronously.

YuNet and dlib hold the GIL for a whole call (a Python thread runs at a tenth of its speed while YuNet
detects), so inside the tracking process they stalled the crop encoders' threads and kept one core busy
while the other idled. A child built from the same backend spec runs them while the tracking loop decodes,
crops and encodes (pipeline.track_video submits a detection frame, then writes the previous one's crops).
Both runners give the same answers; `InlineModels` computes in this process when submitted (custom
backends, or the child turned off).

Protocol: pickled messages on the child's stdin / stdout; the child's own stdout goes to stderr, so a
library that prints cannot corrupt it. A request is (ticket, op, args); a reply (ticket, ok, value, seconds).
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

_STOP = object()


class FaceModelError(RuntimeError):
    """The face model process failed: it could not start, a call raised, or it died."""


def _ops():
    from hvbench_assets.core.vision.pipeline import detection_pass

    return {
        "detect": detection_pass,  # (backend, params, image, to_src, fine, whole, alive, previous)
        "embed": lambda backend, params, image, face: backend.embedder.embed(image, face),
    }


class InlineModels:
    """Runs each request in this process when it is submitted."""

    def __init__(self, backend, params):
        self.backend, self.params = backend, params
        self.seconds: Counter = Counter()  # compute time per op
        self._done: dict[int, tuple[bool, Any]] = {}
        self._ops = _ops()
        self._next = 0

    def submit(self, op: str, *args) -> int:
        self._next += 1
        t0 = time.perf_counter()
        try:
            self._done[self._next] = (True, self._ops[op](self.backend, self.params, *args))
        except Exception as exc:  # noqa: BLE001 - raised again by result(), like the child's errors
            self._done[self._next] = (False, exc)
        self.seconds[op] += time.perf_counter() - t0
        return self._next

    def result(self, ticket: int):
        ok, value = self._done.pop(ticket)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self._done.clear()


class ModelProcess:
    """The backend rebuilt from `spec` (build_backend's arguments) in a child Python process. submit()
    returns at once (a thread pickles and writes); result() waits for that request's reply."""

    def __init__(self, spec: dict, params, label: str = ""):
        self.label = label  # for messages: the video being tracked
        self.seconds: Counter = Counter()
        self._replies: dict[int, tuple[bool, Any]] = {}
        self._cond = threading.Condition()
        self._dead: str | None = None
        self._next = 0
        self._op_of: dict[int, str] = {}
        root = Path(__file__).resolve().parents[3]  # the checkout holding hvbench_assets, for the child's imports
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)}
        try:
            self._proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env=env)
        except OSError as exc:
            raise FaceModelError(f"{label}: cannot start the face model process ({exc}); set the vision "
                                 "resource's model_process to false to run the models in the step's process") from exc
        self._outbox: queue.Queue = queue.Queue()
        self._writer = threading.Thread(target=self._write, daemon=True, name="face-models-writer")
        self._reader = threading.Thread(target=self._read, daemon=True, name="face-models-reader")
        self._writer.start()
        self._reader.start()
        self._outbox.put(pickle.dumps((spec, params), protocol=pickle.HIGHEST_PROTOCOL))

    @property
    def pid(self) -> int:
        return self._proc.pid

    def submit(self, op: str, *args) -> int:
        self._next += 1
        self._op_of[self._next] = op
        # pickled here, so later changes to the caller's arrays cannot reach the child
        self._outbox.put(pickle.dumps((self._next, op, args), protocol=pickle.HIGHEST_PROTOCOL))
        return self._next

    def result(self, ticket: int):
        with self._cond:
            while ticket not in self._replies and self._dead is None:
                self._cond.wait()
            if ticket not in self._replies:
                raise FaceModelError(f"{self.label}: {self._dead}")
            ok, value = self._replies.pop(ticket)
        if not ok:
            raise FaceModelError(f"{self.label}: the face model process failed: {value}")
        return value

    def close(self) -> None:
        """Ends the child: its input closes, it exits after the current call (killed after 10 s)."""
        self._outbox.put(_STOP)
        self._writer.join(timeout=10)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=5)

    def _write(self) -> None:
        try:
            while (data := self._outbox.get()) is not _STOP:
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child died: the reader reports it
        finally:
            try:
                self._proc.stdin.close()
            except OSError:
                pass

    def _read(self) -> None:
        out = self._proc.stdout
        try:
            while True:
                ticket, ok, value, seconds = pickle.load(out)
                with self._cond:
                    if ticket == 0:  # start-up failed: nothing else will come
                        self._dead = f"the face model process could not load the backend: {value}"
                    else:
                        self._replies[ticket] = (ok, value)
                        self.seconds[self._op_of.pop(ticket, "?")] += seconds
                    self._cond.notify_all()
        except (EOFError, OSError, pickle.UnpicklingError):
            code = self._proc.wait()
            with self._cond:
                if self._dead is None:
                    self._dead = f"the face model process exited with code {code} before answering"
                self._cond.notify_all()


def _serve() -> None:
    """The child: build the backend, then answer requests until stdin closes."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, not into the replies
    requests = sys.stdin.buffer

    def reply(*msg) -> None:
        pickle.dump(msg, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()

    spec, params = pickle.load(requests)
    try:
        from hvbench_assets.core.vision.backends import build_backend

        backend = build_backend(**spec)
        ops = _ops()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it for the video
        reply(0, False, f"{type(exc).__name__}: {exc}", 0.0)
        return
    while True:
        try:
            ticket, op, args = pickle.load(requests)
        except EOFError:
            return
        t0 = time.perf_counter()
        try:
            value, ok = ops[op](backend, params, *args), True
        except Exception as exc:  # noqa: BLE001 - the parent raises it as a FaceModelError
            value, ok = f"{op}: {type(exc).__name__}: {exc}", False
        reply(ticket, ok, value, time.perf_counter() - t0)


if __name__ == "__main__":
    _serve()

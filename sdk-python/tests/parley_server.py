"""A real Parley server for the tests: ``node --import tsx src/main.ts`` from this checkout, with a config of its own
in a temp dir (LMDB there), test mode on, the offline LLM, on 127.0.0.1 (a free port, or a given one to restart on).
Mirrors ``spawnParley`` in test/support/parley.ts."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SECRET = "test-secret-0123456789abcdef"
START_TIMEOUT = 120.0  # a busy machine: tsx compiles the server on start
_URL = re.compile(r'"url":"(http://[^"]+)"')


def config_for(storage: Path, port: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": port},
        "storage": {"path": str(storage), "disk_reserve_mb": 1},
        "secret": SECRET,
        "logging": {"level": "info"},
        "identity": {"allow_anonymous": True},
        "demo": {"backend": False},
        "channels": {"whatsapp": {"enabled": True, "provider": "sdk"}},
    }
    config.update(extra or {})
    return config


def _die_with_parent() -> None:
    """Linux: the server gets SIGKILL when the test process dies, even killed (no Parley left running)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class ParleyServer:
    def __init__(self, workdir: Path, *, port: int = 0, extra: dict[str, Any] | None = None) -> None:
        self.workdir = workdir
        self.storage = workdir / "data"
        self.port = port
        self.extra = extra
        self.url = ""
        self.lines: list[str] = []
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> ParleyServer:
        node = shutil.which("node")
        assert node, "node is not on PATH"
        config_path = self.workdir / "parley.yaml"
        # JSON is YAML: the config file Parley reads.
        config_path.write_text(json.dumps(config_for(self.storage, self.port, self.extra)))
        env = dict(os.environ, SERVICE_CONFIG=str(config_path), SERVICE_TEST_MODE="1", SERVICE_SDK_SECRET=SECRET)
        env.pop("PARLEY_TEST_ENGINE", None)
        self.lines = []
        found = threading.Event()
        process = subprocess.Popen(
            [node, "--import", "tsx", str(REPO / "src" / "main.ts")],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_die_with_parent,
        )
        self._process = process

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.lines.append(line)
                match = _URL.search(line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()  # exited: start() reports it

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(START_TIMEOUT) or not self.url:
            self.stop(signal.SIGKILL)
            raise RuntimeError(f"Parley did not start:\n{self.output()}")
        self.port = int(self.url.rsplit(":", 1)[1])
        return self

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)

    def output(self) -> str:
        return "".join(self.lines)[-6000:]

    def get(self, path: str) -> Any:
        request = urllib.request.Request(f"{self.url}{path}", headers={"authorization": f"Bearer {SECRET}"})
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (the test's own server)
            return json.loads(response.read())

    def post(self, path: str, body: Any) -> Any:
        data = json.dumps(body).encode()
        headers = {"authorization": f"Bearer {SECRET}", "content-type": "application/json"}
        request = urllib.request.Request(f"{self.url}{path}", data=data, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (the test's own server)
            return json.loads(response.read())

    def move_clock(self, offset_ms: int) -> None:
        """Sets the server's clock this far ahead of real time (test mode's ``POST /__test__/clock``): timers due
        by then fire."""
        self.post("/__test__/clock", {"offsetMs": offset_ms})

    def functions(self) -> list[str]:
        names = self.get("/__test__/sdk/functions")
        assert isinstance(names, list)
        return [str(n) for n in names]


async def until(condition: Callable[[], Any], timeout: float = 60.0, what: str = "the condition") -> Any:
    """Polls ``condition()`` (in a worker thread: it may block) until it returns something truthy, without blocking
    the event loop the SDK runs on. Generous: the machine is busy."""
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(condition)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


@contextmanager
def running_server(prefix: str, extra: dict[str, Any] | None = None) -> Iterator[ParleyServer]:
    """A Parley of its own in a fresh directory, stopped and removed afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    s = ParleyServer(workdir, extra=extra).start()
    try:
        yield s
    finally:
        s.stop()
        shutil.rmtree(workdir, ignore_errors=True)

"""The Python client and worker against the real queue: this repository's coordinator and example handler in a
`wrangler dev` of their own (as `npm start` runs them: free ports, their own state and dev registry), driven with
the standard library's test runner — `python3 -m unittest discover -s python/tests -t python` (run by .ci/run).
The worker's types are pulled (no binding), one per test so no test sees another's jobs.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from edgequeue import Client, QueueError, RetryableJobError, TerminalJobError, Worker  # noqa: E402

TOKEN = "python-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


class RealQueue(unittest.TestCase):
    queue: subprocess.Popen
    client: Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.state = tempfile.mkdtemp(prefix="edgequeue-python-")
        port, inspector = free_port(), free_port()
        env = {**os.environ, "WRANGLER_SEND_METRICS": "false", "WRANGLER_REGISTRY_PATH": os.path.join(cls.state, "registry")}
        args = ["node", os.path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "dev", "-c", "wrangler.toml", "-c", "examples/handler/wrangler.toml"]
        args += ["--port", str(port), "--inspector-port", str(inspector), "--ip", "127.0.0.1", "--persist-to", os.path.join(cls.state, "data"), "--log-level", "error", "--var", f"QUEUE_TOKEN:{TOKEN}"]
        cls.queue = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.client = Client(f"http://127.0.0.1:{port}", TOKEN, timeout=30)

        def ready():
            try:
                urllib.request.urlopen(f"{cls.client.url}/v1/health", timeout=2).read()
                return True
            except OSError:
                return False

        wait_for("wrangler dev to answer", ready, timeout=90)

        # wrangler dev reloads the coordinator once the example handler registers: wait for a pushed job to complete.
        def handler_connected():
            try:
                job = cls.client.enqueue("demo.echo", {})
                return wait_for("demo.echo", lambda: cls.client.get(job["id"])["state"] == "completed", timeout=3)
            except (QueueError, OSError, AssertionError):
                return False

        wait_for("the example handler to connect", handler_connected, timeout=60)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.queue.terminate()
        try:
            cls.queue.wait(10)
        except subprocess.TimeoutExpired:
            cls.queue.kill()

    def type(self, name: str) -> str:
        return f"py.{name}.{uuid.uuid4().hex[:8]}"

    # ------------------------------------------------------------ the client

    def test_client_enqueues_reads_lists_signals_cancels_and_refuses_bad_input_naming_the_field(self) -> None:
        t = self.type("client")
        job = self.client.enqueue(t, {"n": 1}, delay_ms=60_000, max_attempts=2)
        self.assertEqual(job["payload"], {"n": 1})
        self.assertEqual(job["maxAttempts"], 2)
        self.assertEqual(job["runAt"] - job["createdAt"], 60_000)
        ids = self.client.enqueue_many([{"type": t, "payload": {"n": 2}}, {"type": t, "payload": {"n": 3}, "id": "three"}])
        self.assertEqual([r["created"] for r in ids], [True, True])
        again = self.client.enqueue_many([{"type": t, "payload": {"n": 3}, "id": "three"}])
        self.assertEqual(again[0]["created"], False)
        self.assertEqual(self.client.get(ids[1]["id"])["payload"], {"n": 3})
        self.assertEqual(len(self.client.list(type=t)["items"]), 3)
        self.assertEqual(self.client.signal(job["id"], "go", {"ok": True})["delivered"], "kept")
        self.assertEqual(self.client.cancel(job["id"], "by the test")["state"], "cancelled")
        self.assertEqual(self.client.retry(job["id"])["state"], "pending")
        with self.assertRaises(QueueError) as refused:
            self.client.enqueue(t, {"n": 1}, priority="high")
        self.assertEqual(refused.exception.status, 400)
        self.assertEqual(refused.exception.code, "invalid_request")
        self.assertIn("priority", str(refused.exception))

    # ------------------------------------------------------------ the worker

    def test_worker_runs_jobs_and_their_results_are_kept(self) -> None:
        t = self.type("echo")
        ids = [self.client.enqueue(t, {"n": n})["id"] for n in range(5)]
        seen = []
        worker = Worker(self.client, {t: lambda p, ctx: seen.append(ctx.attempt) or {"twice": p["n"] * 2}}, concurrency=3)
        ran = 0
        while ran < 5:
            ran += worker.run_once()
        for n, id in enumerate(ids):
            job = self.client.get(id)
            self.assertEqual((job["state"], job["result"]), ("completed", {"twice": n * 2}))
        self.assertEqual(seen, [1] * 5)

    def test_retryable_terminal_and_other_errors(self) -> None:
        t = self.type("errors")
        retried = self.client.enqueue(t, {"kind": "retryable"})["id"]
        terminal = self.client.enqueue(t, {"kind": "terminal"})["id"]
        other = self.client.enqueue(t, {"kind": "other"}, max_attempts=1)["id"]

        def handler(payload, ctx):
            if payload["kind"] == "retryable" and ctx.attempt == 1:
                raise RetryableJobError("the mail server said later", retry_after_ms=0)
            if payload["kind"] == "terminal":
                raise TerminalJobError("no such mailbox")
            if payload["kind"] == "other":
                raise KeyError("missing")
            return "sent"

        worker = Worker(self.client, {t: handler})
        worker.run_once()
        wait_for("the retry to come due", lambda: worker.run_once() >= 1)
        self.assertEqual(self.client.get(retried)["result"], {"value": "sent"})
        self.assertEqual(self.client.get(retried)["attempts"], 2)
        failed = self.client.get(terminal)
        self.assertEqual((failed["state"], failed["failureKind"], failed["lastError"], failed["attempts"]), ("failed", "fatal", "no such mailbox", 1))
        broke = self.client.get(other)
        self.assertEqual((broke["state"], broke["failureKind"]), ("failed", "retries_exhausted"))
        self.assertIn("KeyError: 'missing'", broke["lastError"])

    def test_a_retry_replays_journaled_steps_and_runs_only_the_rest(self) -> None:
        t = self.type("steps")
        id = self.client.enqueue(t, {})["id"]
        ran = []

        def handler(payload, ctx):
            a = ctx.step("reserve", lambda: ran.append("reserve") or {"held": ctx.attempt})
            if ctx.attempt == 1:
                raise RetryableJobError("crash after the step", retry_after_ms=0)
            b = ctx.step("charge", lambda: ran.append("charge") or "ch_1")
            ctx.progress(100)
            return {"a": a, "b": b}

        worker = Worker(self.client, {t: handler})
        worker.run_once()
        wait_for("the retry", lambda: worker.run_once() >= 1)
        job = self.client.get(id)
        self.assertEqual(job["result"], {"a": {"held": 1}, "b": "ch_1"})
        self.assertEqual(ran, ["reserve", "charge"])
        self.assertEqual(job["progress"], 100)
        steps = self.client.call("GET", f"/v1/jobs/{id}/steps")["items"]
        self.assertEqual([(s["name"], s["attempt"]) for s in steps], [("reserve", 1), ("charge", 2)])

    def test_a_job_paused_mid_step_stops_after_it_and_resumed_runs_the_rest(self) -> None:
        t = self.type("pause")
        id = self.client.enqueue(t, {})["id"]
        ran = []
        in_step = threading.Event()
        go_on = threading.Event()

        def held():
            ran.append("a")
            in_step.set()
            go_on.wait(10)
            return 1

        def handler(payload, ctx):
            a = ctx.step("a", held)
            return {"b": ctx.step("b", lambda: ran.append("b") or a + 1)}

        worker = Worker(self.client, {t: handler})
        runner = threading.Thread(target=lambda: wait_for("the claim", lambda: worker.run_once() >= 1))
        runner.start()
        self.assertTrue(in_step.wait(20))
        asked = self.client.pause(id)
        self.assertEqual((asked["state"], asked["waitingFor"][0]["kind"]), ("running", "pause"))
        go_on.set()
        runner.join(20)
        paused = self.client.get(id)
        self.assertEqual((paused["state"], paused["attempts"], paused["lastError"], paused["waitingFor"][0]["kind"]), ("waiting", 0, None, "pause"))
        self.assertEqual(ran, ["a"])
        self.client.resume(id)
        wait_for("the resumed job", lambda: worker.run_once() >= 1)
        job = self.client.get(id)
        self.assertEqual((job["state"], job["result"]), ("completed", {"b": 2}))
        self.assertEqual(ran, ["a", "b"])

    def test_run_long_polls_renews_the_lease_and_stops_a_cancelled_handler(self) -> None:
        t = self.type("poll")
        worker = Worker(self.client, {t: self._slow}, concurrency=2, lease_ms=1_000, wait_ms=2_000)
        runner = threading.Thread(target=worker.run)
        runner.start()
        try:
            time.sleep(0.3)  # the worker's claim is waiting when the job arrives
            long = self.client.enqueue(t, {"seconds": 2.5})["id"]
            cancelled = self.client.enqueue(t, {"seconds": 30})["id"]
            # Three leases of 1 s: kept by the worker's renewals.
            wait_for("the long job", lambda: self.client.get(long)["state"] == "completed", timeout=15)
            self.assertEqual(self.client.get(long)["result"], {"slept": 2.5, "stopped": False})
            wait_for("the second job to run", lambda: self.client.get(cancelled)["state"] == "running")
            self.client.cancel(cancelled, "no longer needed")
            wait_for("the handler to see it", lambda: self.stopped.get(cancelled), timeout=10)
        finally:
            worker.stop()
            runner.join(40)
        self.assertFalse(runner.is_alive())
        self.assertEqual(self.client.get(cancelled)["state"], "cancelled")

    stopped: dict = {}

    def _slow(self, payload, ctx):
        start = time.time()
        while time.time() - start < payload["seconds"]:
            if ctx.cancelled:
                self.stopped[ctx.id] = True
                return None
            time.sleep(0.05)
        return {"slept": payload["seconds"], "stopped": False}

    def test_sigterm_stops_claiming_and_lets_the_running_job_finish(self) -> None:
        t = self.type("sigterm")
        id = self.client.enqueue(t, {})["id"]
        script = (
            "import sys, time; sys.path.insert(0, sys.argv[1])\n"
            "from edgequeue import Client, Worker\n"
            "def handler(p, ctx):\n"
            "    print('started', flush=True); time.sleep(1.5); return {'finished': True}\n"
            "w = Worker(Client(sys.argv[2], sys.argv[3]), {sys.argv[4]: handler}, wait_ms=1000, grace=10)\n"
            "w.install_signal_handlers(); w.run(); print('stopped', flush=True)\n"
        )
        child = subprocess.Popen([sys.executable, "-c", script, os.path.join(ROOT, "python"), self.client.url, TOKEN, t], stdout=subprocess.PIPE, text=True)
        self.assertEqual(child.stdout.readline().strip(), "started")
        child.terminate()
        out, _ = child.communicate(timeout=30)
        self.assertEqual(child.returncode, 0)
        self.assertIn("stopped", out)
        self.assertEqual(self.client.get(id)["result"], {"finished": True})


if __name__ == "__main__":
    unittest.main()

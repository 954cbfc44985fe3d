"""``Worker(client, handlers, concurrency)``: a pull worker in Python, as ``edgequeue/worker`` is in Node.

What it does (docs/pull-workers.md "From Python"): long-poll claims (``POST /v1/claim`` with ``waitMs``) for as many
jobs as it has free slots; each job's handler ``fn(payload, ctx)`` on a thread of its own; the lease renewed every
third of it while the handler runs; a lease deadline — when renewals fail until the lease would have run out, the
handler is told to stop (``ctx.cancelled``) and anything it writes after raises ``LeaseLostError``; durable steps
(``ctx.step(name, fn)``: a step journaled by an earlier attempt returns its result without running); progress and
heartbeats; ``RetryableJobError`` / ``TerminalJobError`` / any other exception as a retry; a graceful stop on
SIGTERM (``install_signal_handlers()``): no new claims, running handlers get ``grace`` seconds to finish.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional

from .client import Client, Json
from .errors import LeaseLostError, QueueError, RetryableJobError, TerminalJobError

Handler = Callable[[Any, "JobContext"], Any]

#: Codes that say the attempt no longer holds its job: the worker writes nothing more for it.
_OVER = {"lease_lost", "already_terminal", "not_found"}


class JobContext:
    """What a handler gets beside its payload: the job, its attempt, and the calls that go through the queue."""

    def __init__(self, attempt: "_Attempt") -> None:
        self._attempt = attempt
        job = attempt.job
        self.id: str = job["id"]
        self.type: str = job["type"]
        self.attempt: int = job["attempts"]
        self.max_attempts: int = job["maxAttempts"]
        self.scope: Optional[Json] = job.get("scope")

    @property
    def cancelled(self) -> bool:
        """True once this attempt no longer holds its job (lost lease, cancel, timeout, shutdown past its grace)."""
        return self._attempt.over.is_set()

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        """A durable step: run once and journaled; a retry returns the journaled result without running ``fn``."""
        return self._attempt.step(name, fn)

    def progress(self, value: Any) -> None:
        """Report progress (a number from 0 to 100, or a JSON object): kept on the job and told to its watchers."""
        self._attempt.write("progress", {"progress": value})

    def heartbeat(self) -> None:
        """Renew the lease now (the worker renews it by itself every third of it); raises LeaseLostError when lost."""
        self._attempt.heartbeat()


class PauseRequest(Exception):
    """Raised after a step whose answer says the job was asked to pause: the attempt ends there. Do not catch it."""


class _Attempt:
    """One leased job on its way through its handler."""

    def __init__(self, worker: "Worker", job: Json) -> None:
        self.worker = worker
        self.job = job
        self.token: str = job["leaseToken"]
        self.over = threading.Event()
        self.expires_at = job["leaseExpiresAt"] / 1000.0
        journal = job.get("journal") or {}
        self.start: Json = journal.get("start") or {"at": int(time.time() * 1000), "seed": secrets.token_hex(8)}
        self.entries: Dict[int, Json] = {e["seq"]: e for e in journal.get("entries", [])}
        self.next_seq = 0
        # The queue asked the job to pause (a step's answer said so): the attempt ends after that step, unspent.
        self.pausing = False

    @property
    def path(self) -> str:
        from urllib.parse import quote

        return f"/v1/jobs/{quote(self.job['id'], safe='')}"

    def write(self, what: str, body: Mapping[str, Any]) -> Json:
        if self.over.is_set():
            raise LeaseLostError(f"job {self.job['id']}: this attempt no longer holds it")
        try:
            return self.worker.client.call("POST", f"{self.path}/{what}", {"leaseToken": self.token, **body})
        except QueueError as e:
            reason = e.details.get("reason") if isinstance(e.details, dict) else None
            if e.code in _OVER or reason in ("lease_lost", "cancelled", "timeout"):
                self.over.set()
                raise LeaseLostError(str(e)) from None
            raise

    def heartbeat(self) -> None:
        answer = self.write("heartbeat", {"leaseMs": self.worker.lease_ms})
        self.expires_at = answer["leaseExpiresAt"] / 1000.0

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        seq = self.next_seq
        self.next_seq += 1
        held = self.entries.get(seq)
        if held is not None:
            if held["name"] != name or held["kind"] != "step":
                raise TerminalJobError(f"NondeterminismError: step {seq} is {held['name']!r} in the journal, {name!r} in the code")
            if held.get("finishedAt") is not None:
                return json.loads(held["result"] if held.get("result") is not None else "null")
        if self.over.is_set():
            raise LeaseLostError(f"job {self.job['id']}: this attempt no longer holds it")
        started = int(time.time() * 1000)
        value = fn()
        # Returned through JSON on the first run too, so a replay returns exactly what the first run did.
        result = json.loads(json.dumps(value))
        answer = self.write("steps", {"op": "commit", "seq": seq, "name": name, "result": result, "startedAt": started, "start": self.start})
        if answer.get("paused") is True:
            self.pausing = True
            raise PauseRequest(f"pausing after step {name!r}: the job was asked to pause; do not catch this")
        return result


class Worker:
    """Claims jobs of ``handlers``' types and runs them, ``concurrency`` at a time, until ``stop()``."""

    def __init__(
        self,
        client: Client,
        handlers: Mapping[str, Handler],
        concurrency: int = 4,
        lease_ms: int = 30_000,
        wait_ms: int = 20_000,
        name: Optional[str] = None,
        grace: float = 30.0,
        on_error: Optional[Callable[[Json, BaseException], None]] = None,
    ) -> None:
        if not handlers:
            raise ValueError("handlers: give at least one job type and its function")
        if concurrency < 1:
            raise ValueError(f"concurrency: {concurrency} is not a number of jobs at once (1 or more)")
        if lease_ms < 1000:
            raise ValueError(f"lease_ms: {lease_ms} is below the queue's least lease, 1000 ms")
        self.client = client
        self.handlers = dict(handlers)
        self.concurrency = concurrency
        self.lease_ms = lease_ms
        self.wait_ms = wait_ms
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.grace = grace
        self.on_error = on_error
        self._stopping = threading.Event()
        self._slots = threading.Semaphore(concurrency)
        self._running: Dict[str, _Attempt] = {}
        self._lock = threading.Lock()
        self._threads: List[threading.Thread] = []

    # ------------------------------------------------------------ lifecycle

    def run(self) -> None:
        """Claim and run jobs until ``stop()``; then wait for running handlers (up to ``grace``) and return."""
        renewer = threading.Thread(target=self._renew_loop, name="edgequeue-renew", daemon=True)
        renewer.start()
        try:
            while not self._stopping.is_set():
                free = self._free_slots()
                if free == 0:
                    time.sleep(0.02)
                    continue
                try:
                    jobs = self._claim(free)
                except QueueError as e:
                    self._log("worker:claim_failed", error=str(e))
                    self._stopping.wait(1.0)
                    continue
                except OSError as e:
                    self._log("worker:claim_failed", error=str(e))
                    self._stopping.wait(1.0)
                    continue
                for job in jobs:
                    self._start(job)
        finally:
            self._drain()

    def stop(self) -> None:
        """Stop claiming; ``run()`` returns once running handlers end (or ``grace`` passes)."""
        self._stopping.set()

    def install_signal_handlers(self) -> None:
        """SIGTERM and SIGINT stop the worker gracefully (call from the main thread)."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())

    def run_once(self) -> int:
        """Claim what is due now (no wait) and run it to its end; answers how many jobs ran. For tests and cron."""
        jobs = self._claim(self.concurrency, wait=False)
        threads = [self._start(job) for job in jobs]
        for t in threads:
            t.join()
        return len(jobs)

    # ------------------------------------------------------------ inside

    def _free_slots(self) -> int:
        with self._lock:
            return self.concurrency - len(self._running)

    def _claim(self, limit: int, wait: bool = True) -> List[Json]:
        body: Json = {"worker": self.name, "types": sorted(self.handlers), "limit": limit, "leaseMs": self.lease_ms}
        if wait:
            body["waitMs"] = self.wait_ms
        answer = self.client.call("POST", "/v1/claim", body, timeout=self.wait_ms / 1000.0 + 30)
        return list(answer.get("jobs", []))

    def _start(self, job: Json) -> threading.Thread:
        attempt = _Attempt(self, job)
        with self._lock:
            self._running[job["id"]] = attempt
        t = threading.Thread(target=self._run_one, args=(attempt,), name=f"edgequeue-{job['id']}", daemon=True)
        # Only live threads are kept: a worker that runs for days does not keep every job's.
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()
        return t

    def _failure(self, attempt: _Attempt, e: Exception) -> Json:
        """What a raise says of the attempt: `POST /v1/jobs/{id}/fail`'s body."""
        if attempt.pausing:
            # Asked to pause after a step, whatever it raised on the way out: a snooze, unspent, which the queue
            # turns into the pause (docs/http-api.md "Pause and resume one job").
            return {"error": "snoozed", "retryAfterMs": 0, "consumesAttempt": False, "snooze": True}
        self._report(attempt.job, e)
        if isinstance(e, TerminalJobError):
            return {"error": _message(e), "fatal": True}
        if isinstance(e, RetryableJobError):
            body: Json = {"error": _message(e)}
            if e.retry_after_ms is not None:
                body["retryAfterMs"] = int(e.retry_after_ms)
            return body
        # Any other error is a retry, as in edgequeue/worker.
        return {"error": _message(e), "frame": _frame(e)}

    def _run_one(self, attempt: _Attempt) -> None:
        job = attempt.job
        try:
            handler = self.handlers[job["type"]]
            try:
                value = handler(job.get("payload"), JobContext(attempt))
            except LeaseLostError:
                return
            except Exception as e:  # noqa: BLE001 — how the attempt ended is read from what it raised
                self._settle(attempt, "fail", self._failure(attempt, e))
                return
            try:
                result = _to_result(value)
            except (TypeError, ValueError) as e:
                # The work is done; only its result cannot be stored. Retrying would repeat the work.
                self._settle(attempt, "fail", {"error": f"the handler's result is not JSON-serializable: {e}", "fatal": True})
                return
            self._settle(attempt, "complete", {"result": result} if result is not None else {})
        finally:
            attempt.over.set()
            with self._lock:
                self._running.pop(job["id"], None)

    def _settle(self, attempt: _Attempt, what: str, body: Json) -> None:
        try:
            attempt.write(what, body)
        except LeaseLostError:
            pass
        except (QueueError, OSError) as e:
            # The lease lapses and the queue retries the job: nothing is lost, the attempt may run again.
            self._log("worker:write_failed", id=attempt.job["id"], path=what, error=str(e))

    def _renew_loop(self) -> None:
        """Every attempt's lease renewed every third of it; one whose renewals fail until it would lapse is told to stop."""
        period = self.lease_ms / 3000.0
        while not self._stopping.is_set() or self._running:
            time.sleep(min(period, 0.5))
            now = time.time()
            with self._lock:
                attempts = list(self._running.values())
            for a in attempts:
                if a.over.is_set() or a.expires_at - now > self.lease_ms / 1000.0 * 2 / 3:
                    continue
                try:
                    a.heartbeat()
                except LeaseLostError:
                    pass
                except (QueueError, OSError) as e:
                    self._log("worker:write_failed", id=a.job["id"], path="heartbeat", error=str(e))
                    # The lease deadline: past it another worker may hold the job, so this handler must stop.
                    if time.time() >= a.expires_at - 1.0:
                        a.over.set()

    def _drain(self) -> None:
        deadline = time.time() + self.grace
        for t in list(self._threads):
            t.join(max(0.0, deadline - time.time()))
        # Past the grace: the jobs still running go back unstarted for another worker (their attempt not counted).
        with self._lock:
            left = list(self._running.values())
        for a in left:
            try:
                a.write("release", {})
            except (LeaseLostError, QueueError, OSError):
                pass
            a.over.set()

    def _report(self, job: Json, e: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(job, e)

    def _log(self, event: str, **fields: Any) -> None:
        print(json.dumps({"event": event, **fields}), flush=True)


def _message(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}" if not isinstance(e, (RetryableJobError, TerminalJobError)) else str(e)
    return (text or type(e).__name__)[:4000]


def _frame(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    if not tb:
        return ""
    f = tb[-1]
    return f"at {f.name} ({os.path.basename(f.filename)}:{f.lineno})"[:200]


def _to_result(value: Any) -> Optional[Json]:
    """A job's result is a JSON object: None stays none, a dict stays, anything else is ``{"value": …}`` (as in Node)."""
    if value is None:
        return None
    data = json.loads(json.dumps(value))
    if data is None:
        return None
    return data if isinstance(data, dict) else {"value": data}

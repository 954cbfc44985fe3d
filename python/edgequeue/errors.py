"""The errors a handler raises, and the one the client raises (docs/pull-workers.md "From Python")."""

from __future__ import annotations

from typing import Any, Optional


class RetryableJobError(Exception):
    """The attempt failed and may be retried: after ``retry_after_ms`` when given, else the type's backoff."""

    def __init__(self, message: str, retry_after_ms: Optional[int] = None) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class TerminalJobError(Exception):
    """The job failed for good: retrying cannot help (a bad payload, a refused charge). No retry is spent on it."""


class LeaseLostError(Exception):
    """This attempt no longer holds its job (its lease ran out, it was cancelled or timed out): stop, write nothing."""


class QueueError(Exception):
    """An answer of the queue's HTTP API that was not a success: ``code`` is the API's stable error code."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.details = details

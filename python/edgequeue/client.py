"""``Client(url, token)``: the queue's HTTP API from Python, with the standard library only (docs/http-api.md)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional

from .errors import QueueError

Json = Dict[str, Any]


class Client:
    """A client of one queue: its URL (``https://edgequeue.<you>.workers.dev``) and a token of ``QUEUE_TOKENS``."""

    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # ------------------------------------------------------------ producer calls

    def enqueue(self, type: str, payload: Optional[Mapping[str, Any]] = None, **options: Any) -> Json:
        """Enqueue one job; answers the job (``POST /v1/jobs``). Options are the API's: ``id``, ``delay_ms`` or ``delayMs``…"""
        body: Json = {"type": type, "payload": dict(payload or {}), **_camel(options)}
        return self.call("POST", "/v1/jobs", body)["job"]

    def enqueue_many(self, jobs: List[Mapping[str, Any]]) -> List[Json]:
        """Enqueue 1 to 1,000 jobs in one call, all or none; answers each one's ``{id, created}``."""
        return self.call("POST", "/v1/jobs/batch", {"jobs": [_camel(dict(j)) for j in jobs]})["results"]

    def get(self, id: str) -> Json:
        return self.call("GET", f"/v1/jobs/{_seg(id)}")["job"]

    def list(self, **query: Any) -> Json:
        """A page of jobs: ``type``, ``state``, ``tag``, ``limit``, ``cursor``… as ``GET /v1/jobs`` takes them."""
        q = urllib.parse.urlencode({k: v for k, v in _camel(query).items() if v is not None}, doseq=True)
        return self.call("GET", f"/v1/jobs{'?' + q if q else ''}")

    def cancel(self, id: str, reason: Optional[str] = None) -> Json:
        return self.call("POST", f"/v1/jobs/{_seg(id)}/cancel", {"reason": reason} if reason else {})["job"]

    def retry(self, id: str) -> Json:
        return self.call("POST", f"/v1/jobs/{_seg(id)}/retry", {})["job"]

    def pause(self, id: str) -> Json:
        """Pause one job: a pending one at once, a running one at its next step, a waiting one when its waits end."""
        return self.call("POST", f"/v1/jobs/{_seg(id)}/pause", {})["job"]

    def resume(self, id: str) -> Json:
        """Resume a paused job: pending again at the time it was due."""
        return self.call("POST", f"/v1/jobs/{_seg(id)}/resume", {})["job"]

    def signal(self, id: str, name: str, data: Any = None) -> Json:
        """End the job's ``waitForSignal(name)`` with ``data`` (kept for it if it is not waiting yet)."""
        return self.call("POST", f"/v1/jobs/{_seg(id)}/signals/{_seg(name)}", {"data": data})

    # ------------------------------------------------------------ the wire

    def call(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = None) -> Json:
        """One API call; a non-2xx answer raises QueueError with the API's code and message."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as res:
                text = res.read().decode("utf-8")
                return json.loads(text) if text else {}
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            try:
                err = json.loads(text)["error"]
            except (ValueError, KeyError, TypeError):
                raise QueueError(e.code, "http_error", text[:500]) from None
            raise QueueError(e.code, err.get("code", "unknown"), err.get("message", ""), err.get("details")) from None


def _seg(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _camel(options: Mapping[str, Any]) -> Json:
    """snake_case keyword arguments as the API's camelCase fields (``delay_ms`` → ``delayMs``); camelCase passes."""
    out: Json = {}
    for k, v in options.items():
        head, *rest = k.split("_")
        out[head + "".join(p[:1].upper() + p[1:] for p in rest)] = v
    return out

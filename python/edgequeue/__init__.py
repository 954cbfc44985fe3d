"""edgequeue from Python: a client of the queue's HTTP API and a pull worker, standard library only.

    from edgequeue import Client, Worker

    client = Client("https://edgequeue.<you>.workers.dev", token)
    client.enqueue("thumbnail.make", {"key": "a.png"})
    Worker(client, {"thumbnail.make": make_thumbnail}, concurrency=4).run()

docs/pull-workers.md "From Python" has the rest.
"""

from .client import Client
from .errors import LeaseLostError, QueueError, RetryableJobError, TerminalJobError
from .worker import JobContext, Worker

__all__ = ["Client", "JobContext", "LeaseLostError", "QueueError", "RetryableJobError", "TerminalJobError", "Worker"]

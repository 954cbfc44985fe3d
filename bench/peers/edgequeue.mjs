// edgequeue on local workerd (wrangler dev: the coordinator and the example handler), driven
// over its HTTP API: enqueue with POST /v1/jobs; drained by pull workers (claim + complete) or
// pushed to the example handler Worker, whose demo.noop reports when it started.
import { call, completedJob, fill, pullStep, pushDrain, rate } from "../lib.mjs";

export function openEdgequeue(url) {
  let probes = 0;

  return {
    name: "edgequeue",
    // A type with no handler binding is pull-only: nothing consumes these, as for the peers.
    enqueue: (i) => call(url, "POST", "/v1/jobs", { type: "peers.enqueue", payload: { i, to: "someone@example.com" } }),
    enqueueBatch: (b, size) => fill(url, size, (i) => ({ type: "peers.enqueue", payload: { b, i, to: "someone@example.com" } })),
    drains: {
      "pull: claim + complete ×16 over HTTP": async (n, concurrency) => {
        await fill(url, n, (i) => ({ type: "peers.drain", payload: { i } }));
        return rate(n, concurrency, () => pullStep(url, "peers.drain"));
      },
      // Pushed jobs start as they are enqueued (there is no paused queue to prefill), so this
      // runs from the first enqueue to the last completion: enqueue time counts against us.
      "push to a handler Worker (16 scopes)": (n) => pushDrain(url, { type: "demo.noop", n, scopes: 16, scopeType: "PeersDrain" }),
    },
    submit: async ({ delayMs = 0 } = {}) => {
      const body = { type: "demo.noop", payload: { probe: probes }, scope: { type: "PeersProbe", id: `p${probes++ % 8}` }, ...(delayMs ? { delayMs } : {}) };
      const { job } = await call(url, "POST", "/v1/jobs", body);
      // demo.noop returns the time its handler started, as the peers' handlers record it.
      return { started: async () => (await completedJob(url, job.id)).result.startedAt };
    },
    close: async () => {},
  };
}

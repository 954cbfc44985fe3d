// edgequeue on local workerd (wrangler dev: the coordinator and the example handler), driven
// over its HTTP API: enqueue with POST /v1/jobs; drained by pull workers (claim + complete) or
// pushed to the example handler Worker, whose demo.noop reports when it started.
import { call, listAll, until } from "../lib.mjs";

export function openEdgequeue(url) {
  const batch = (jobs) => call(url, "POST", "/v1/jobs/batch", { jobs });
  let probes = 0;

  return {
    name: "edgequeue",
    // A type with no handler binding is pull-only: nothing consumes these, as for the peers.
    enqueue: (i) => call(url, "POST", "/v1/jobs", { type: "peers.enqueue", payload: { i, to: "someone@example.com" } }),
    enqueueBatch: (b, size) => batch(Array.from({ length: size }, (_, i) => ({ type: "peers.enqueue", payload: { b, i, to: "someone@example.com" } }))),
    drains: {
      "pull: claim + complete ×16 over HTTP": async (n, concurrency) => {
        for (let i = 0; i < n; i += 1000) await batch(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ type: "peers.drain", payload: { i: i + k } })));
        let left = n;
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (left > 0) {
              const { jobs } = await call(url, "POST", "/v1/claim", { worker: "peers", types: ["peers.drain"] });
              if (jobs.length === 0) return;
              left--;
              await call(url, "POST", `/v1/jobs/${jobs[0].id}/complete`, { leaseToken: jobs[0].leaseToken });
            }
          }),
        );
        return n / ((performance.now() - t0) / 1000);
      },
      // Pushed jobs start as they are enqueued (there is no paused queue to prefill), so this
      // runs from the first enqueue to the last completion: enqueue time counts against us.
      "push to a handler Worker (16 scopes)": async (n) => {
        const t0 = Date.now();
        for (let i = 0; i < n; i += 1000) {
          await batch(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ type: "demo.noop", payload: {}, scope: { type: "PeersDrain", id: `s${(i + k) % 16}` } })));
        }
        await until("push drain", async () => {
          const s = await call(url, "GET", "/v1/stats?type=demo.noop");
          return s.completed >= n && s.pending + s.running + s.scheduled === 0;
        });
        const done = await listAll(url, { type: "demo.noop", state: "completed" });
        return done.length / ((Math.max(...done.map((j) => j.finishedAt)) - t0) / 1000);
      },
    },
    submit: async ({ delayMs = 0 } = {}) => {
      const body = { type: "demo.noop", payload: { probe: probes }, scope: { type: "PeersProbe", id: `p${probes++ % 8}` }, ...(delayMs ? { delayMs } : {}) };
      const { job } = await call(url, "POST", "/v1/jobs", body);
      return {
        // demo.noop returns the time its handler started, as the peers' handlers record it.
        started: () =>
          until("probe job", async () => {
            const j = (await call(url, "GET", `/v1/jobs/${job.id}`)).job;
            return j.state === "completed" ? j.result.startedAt : null;
          }),
      };
    },
    close: async () => {},
  };
}

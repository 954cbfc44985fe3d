/**
 * The live figures of `npm run bench` (docs/http-api.md "Live subscriptions"), run by bench/run.mjs in a child
 * Node with WebSocket (Node 20 needs `--experimental-websocket`) against a queue session of their own:
 *
 * - progressFanoutP50Ms / P95: a pulled job's progress report (POST /v1/jobs/{id}/progress) until all 100
 *   WebSockets subscribed to the job have it, per round.
 * - idle subscriptions: 1,000 WebSockets on one scope object, idle for IDLE_MS, then one event to all of them.
 *   What the scope objects were billed meanwhile is read from the queue's own meters (GET /v1/metrics:
 *   edgequeue_object_requests_total and edgequeue_object_active_seconds_total, object="scope" — requests and the
 *   wall time with a request in progress): across the idle window and the one event, a few requests and
 *   milliseconds, against the window's wall time. No request, alarm or call is in progress while the sockets
 *   idle, so the runtime may hibernate the object (the sockets were accepted with ctx.acceptWebSocket).
 *
 * Usage: node --experimental-websocket bench/live.mjs <queue url> <token> <quick|full> — prints one JSON line.
 */
const [url, token, mode] = process.argv.slice(2);
const quick = mode === "quick";
const SUBSCRIBERS = 100;
const IDLE_SOCKETS = 1000;
const IDLE_MS = quick ? 10_000 : 30_000;
const ROUNDS = quick ? 30 : 100;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function call(method, path, body) {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return text.startsWith("{") ? JSON.parse(text) : text;
}
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
};

/** open: n sockets on a subscription URL, each resolved once its first message (the state) arrived. */
async function open(subUrl, n, onMessage) {
  const sockets = [];
  for (let i = 0; i < n; i += 50) {
    sockets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, k) =>
          new Promise((resolve, reject) => {
            const ws = new WebSocket(subUrl.replace(/^http/, "ws"));
            ws.onmessage = (e) => {
              const m = JSON.parse(e.data);
              if (m.event === "state" && !ws.ready) {
                ws.ready = true;
                resolve(ws);
              }
              onMessage(i + k, m);
            };
            ws.onerror = () => reject(new Error(`socket ${i + k} failed`));
          }),
        ),
      )),
    );
  }
  return sockets;
}

/** scopeUsage: the scope objects' requests and active ms as the catalog has them, once they stop moving. */
async function scopeUsage() {
  let last = null;
  for (let i = 0; i < 40; i++) {
    const prom = await fetch(`${url}/v1/metrics`, { headers: { authorization: `Bearer ${token}`, accept: "text/plain" } }).then((r) => r.text());
    const read = (name) => Number(new RegExp(`^${name}\\{object="scope"\\} ([0-9.e+-]+)$`, "m").exec(prom)?.[1] ?? NaN);
    const now = { requests: read("edgequeue_object_requests_total"), activeMs: read("edgequeue_object_active_seconds_total") * 1000 };
    if (last && now.requests === last.requests && now.activeMs === last.activeMs) return now;
    last = now;
    await sleep(1_000);
  }
  return last;
}

async function main() {
  // ------------------------------------------------ a progress report reaching 100 sockets
  const type = `bench.watched.${Date.now()}`;
  const { job } = await call("POST", "/v1/jobs", { type, payload: {} });
  const sub = await call("POST", "/v1/subscriptions", { jobId: job.id });
  const seen = new Map();
  let waiting = null;
  const sockets = await open(sub.url, SUBSCRIBERS, (_i, m) => {
    if (m.event !== "progress") return;
    const n = (seen.get(m.progress.round) ?? 0) + 1;
    seen.set(m.progress.round, n);
    if (waiting && waiting.round === m.progress.round && n === SUBSCRIBERS) waiting.done();
  });
  const [leased] = (await call("POST", "/v1/claim", { worker: "bench", types: [type] })).jobs;
  const fanout = [];
  for (let round = 0; round < ROUNDS; round++) {
    const all = new Promise((done) => (waiting = { round, done }));
    const t0 = performance.now();
    await call("POST", `/v1/jobs/${job.id}/progress`, { leaseToken: leased.leaseToken, progress: { round } });
    await all;
    fanout.push(performance.now() - t0);
  }
  await call("POST", `/v1/jobs/${job.id}/complete`, { leaseToken: leased.leaseToken });
  for (const ws of sockets) ws.close(1000, "done");

  // ------------------------------------------------ 1,000 idle sockets on one object
  const scope = { type: "BenchIdle", id: String(Date.now()) };
  await call("POST", "/v1/jobs", { type, payload: {}, scope });
  const idleSub = await call("POST", "/v1/subscriptions", { scope, ttlMs: 3600_000 });
  let received = 0;
  let allGot = null;
  const openedAt = performance.now();
  const idle = await open(idleSub.url, IDLE_SOCKETS, (_i, m) => {
    if (m.event === "state" && m.job && ++received === IDLE_SOCKETS) allGot?.();
  });
  const openMs = performance.now() - openedAt;
  const before = await scopeUsage();
  await sleep(IDLE_MS);
  received = 0;
  const got = new Promise((r) => (allGot = r));
  const t0 = performance.now();
  await call("POST", "/v1/jobs", { type, payload: { wake: true }, scope });
  await got;
  const eventTo1000Ms = performance.now() - t0;
  const after = await scopeUsage();
  for (const ws of idle) ws.close(1000, "done");
  console.log(
    JSON.stringify({
      progressFanoutP50Ms: percentile(fanout, 50),
      progressFanoutP95Ms: percentile(fanout, 95),
      idleSockets: IDLE_SOCKETS,
      idleOpenMs: Math.round(openMs),
      idleWindowMs: IDLE_MS,
      idleWindowScopeRequests: after.requests - before.requests,
      idleWindowScopeActiveMs: Math.round((after.activeMs - before.activeMs) * 10) / 10,
      eventTo1000SocketsMs: Math.round(eventTo1000Ms),
    }),
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

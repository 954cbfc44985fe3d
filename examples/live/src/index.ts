/**
 * An example backend for a page that follows a job live (docs/http-api.md "Live subscriptions"):
 *
 * - `GET /` — the page: a Start button and a progress bar.
 * - `POST /start` — enqueues `demo.progress` over the service binding and mints a subscription URL for it
 *   (`createSubscription`); the page opens that URL as a WebSocket on the queue's own origin, with no token.
 *
 * The page's script is the whole client side: a WebSocket and one JSON message per event. In an app with a
 * bundler, `watchJob(url, { progress })` from `edgequeue` does the same (and falls back to Server-Sent Events).
 */
import { createClient } from "edgequeue";

interface Env {
  QUEUE: Service;
  /** The queue's origin as browsers reach it, for a URL the queue answered as a path (no `publicUrl` configured). */
  QUEUE_PUBLIC_URL: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/") return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
    if (request.method === "POST" && url.pathname === "/start") {
      const queue = createClient(env.QUEUE);
      const { id } = await queue.enqueue({ type: "demo.progress", payload: { steps: 10, ms: 150 } });
      const sub = await queue.createSubscription({ jobId: id, ttlMs: 60_000 });
      return Response.json({ id, url: new URL(sub.url, env.QUEUE_PUBLIC_URL).href });
    }
    return new Response("GET / or POST /start\n", { status: 404 });
  },
} satisfies ExportedHandler<Env>;

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>edgequeue live</title>
<style>body{font:16px system-ui;margin:3rem}progress{width:20rem;height:1.5rem}</style></head>
<body>
<h1>A job, live</h1>
<button id="start">Start</button>
<p><progress id="bar" max="100" value="0"></progress> <span id="pct">0%</span></p>
<p id="status">idle</p>
<script type="module">
const $ = (id) => document.getElementById(id);
$("start").onclick = async () => {
  $("start").disabled = true;
  $("status").textContent = "starting";
  // Our own backend enqueues and mints the URL; this page never sees the queue's token.
  const { url } = await (await fetch("/start", { method: "POST" })).json();
  const ws = new WebSocket(url.replace(/^http/, "ws"));
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.event === "progress") { $("bar").value = m.progress; $("pct").textContent = Math.round(m.progress) + "%"; }
    if (m.event === "state") $("status").textContent = m.job.state;
    if (m.event === "result") $("status").textContent = "done: " + JSON.stringify(m.result);
  };
  ws.onclose = (e) => { if (e.code !== 1000) $("status").textContent = "closed " + e.code; };
};
</script>
</body>
</html>`;

/**
 * A local HTTP receiver the tests' Workers call out to (started by test/global-setup.mjs, on the port
 * vitest.config.mts chose and handed the Workers as RECEIVER_URL):
 *
 * - `POST /cb/<name>?fail=N`: a completion callback endpoint that answers 500 to its first N requests, then 200;
 *   `GET /cb/<name>` answers what it received: `[{status, headers, body}]`.
 * - `POST /redirect/<name>?to=<url>`: answers 307 to `to` (and keeps what it received under `<name>`, as /cb does).
 * - `POST /v1/traces`: an OTLP/HTTP (JSON) receiver; `GET /traces` answers every request body it received.
 *
 * The global setup starts two, on two ports (RECEIVER_URL, RECEIVER2_URL), so a redirect can point at another host.
 */
import { createServer } from "node:http";

export function startReceiver(port) {
  const calls = new Map();
  const traces = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const url = new URL(req.url, "http://receiver");
      const json = (status, value) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      const cb = /^\/cb\/([^/]+)$/.exec(url.pathname);
      if (cb && req.method === "POST") {
        const seen = calls.get(cb[1]) ?? [];
        calls.set(cb[1], seen);
        const status = seen.length < Number(url.searchParams.get("fail") ?? 0) ? 500 : 200;
        seen.push({ status, headers: req.headers, body });
        return json(status, { ok: status === 200 });
      }
      if (cb && req.method === "GET") return json(200, calls.get(cb[1]) ?? []);
      const redirect = /^\/redirect\/([^/]+)$/.exec(url.pathname);
      if (redirect && req.method === "POST") {
        const seen = calls.get(redirect[1]) ?? [];
        calls.set(redirect[1], seen);
        seen.push({ status: 307, headers: req.headers, body });
        res.writeHead(307, { location: url.searchParams.get("to") ?? "/" });
        return res.end();
      }
      if (url.pathname === "/v1/traces" && req.method === "POST") {
        traces.push({ headers: req.headers, body: JSON.parse(body) });
        return json(200, {});
      }
      if (url.pathname === "/traces" && req.method === "GET") return json(200, traces);
      json(404, { error: "no such route" });
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(() => new Promise((r) => server.close(() => r())))));
}

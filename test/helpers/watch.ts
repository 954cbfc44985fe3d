/**
 * Opening subscription URLs from a test the way a browser or a backend does (docs/http-api.md "Live
 * subscriptions"): through the coordinator's own fetch, as a WebSocket or as Server-Sent Events, collecting
 * the JSON messages.
 */
import { exports } from "cloudflare:workers";
import { vi } from "vitest";
import { api } from "./api";

const queueFetch = (url: string, init?: RequestInit): Promise<Response> => (exports as any).default.fetch(url, init);

export type Msg = { event: string; [k: string]: any };

/** mint: POST /v1/subscriptions with the queue's token; the URL to open. */
export async function mint(body: Record<string, unknown>): Promise<string> {
  const r = await api("POST", "/v1/subscriptions", body);
  if (r.status !== 200) throw new Error(`mint answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.url as string;
}

export interface OpenSocket {
  messages: Msg[];
  closed: { code: number; reason: string } | null;
  ws: WebSocket;
  /** until: resolves once `done` holds of the messages (polled; nothing sleeps blindly). */
  until(done: (m: Msg[]) => boolean, timeoutMs?: number): Promise<Msg[]>;
  closedWith(timeoutMs?: number): Promise<{ code: number; reason: string }>;
}

/** socket: the URL opened as a WebSocket; throws with the answer when it is refused. */
export async function socket(url: string): Promise<OpenSocket> {
  const res = await queueFetch(url, { headers: { upgrade: "websocket" } });
  if (res.status !== 101 || !res.webSocket) throw Object.assign(new Error(`refused ${res.status}`), { status: res.status, body: await res.json().catch(() => null) });
  const ws = res.webSocket;
  const out: OpenSocket = {
    messages: [],
    closed: null,
    ws,
    until: (done, timeoutMs = 10_000) =>
      vi.waitFor(
        () => {
          if (!done(out.messages)) throw new Error(`messages so far: ${JSON.stringify(out.messages.map((m) => m.event))}`);
          return out.messages;
        },
        { timeout: timeoutMs, interval: 10 },
      ),
    closedWith: (timeoutMs = 10_000) =>
      vi.waitFor(
        () => {
          if (!out.closed) throw new Error("still open");
          return out.closed;
        },
        { timeout: timeoutMs, interval: 10 },
      ),
  };
  ws.accept();
  ws.addEventListener("message", (e) => {
    out.messages.push(JSON.parse(e.data as string));
  });
  ws.addEventListener("close", (e) => {
    out.closed = { code: e.code, reason: e.reason };
  });
  return out;
}

/** stream: the URL opened as Server-Sent Events, read to its end (a single job's stream ends with the job). */
export async function stream(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; messages: () => Promise<Msg[]>; res: Response }> {
  const res = await queueFetch(url, { headers: { accept: "text/event-stream", ...headers } });
  return {
    status: res.status,
    headers: res.headers,
    res,
    messages: async () =>
      (await res.text())
        .split("\n\n")
        .filter((f) => f.startsWith("data: "))
        .map((f) => JSON.parse(f.slice(6)) as Msg),
  };
}

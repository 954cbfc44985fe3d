/**
 * Following a live subscription from anywhere — browsers, Workers, Node (docs/http-api.md "Live subscriptions"):
 * `subscribe(url, onMessage)` opens a URL your backend minted (`POST /v1/subscriptions`, `createSubscription`) with
 * no queue token, as a WebSocket where the platform has one, else as Server-Sent Events over `fetch` (Node 20 has no
 * WebSocket). `watchJob(url, on)` is the small helper for one job: callbacks for progress, steps and lines, and a
 * promise of the job's final view. No framework, no dependency.
 *
 * @module
 */
import type { SubscriptionMessage, WatchedJob } from "../job/watch-message";

export type { SubscriptionMessage, WatchedJob } from "../job/watch-message";

export interface SubscribeOptions {
  /** "auto" (default): a WebSocket when `globalThis.WebSocket` exists, else Server-Sent Events over fetch. */
  transport?: "auto" | "websocket" | "sse";
  /** The fetch for Server-Sent Events (default: the global one). */
  fetch?: typeof fetch;
  /** Closes the subscription when it aborts. */
  signal?: AbortSignal;
  /**
   * Reconnect a dropped connection from the time its messages carried last (docs/http-api.md "Reconnecting"): what
   * was missed — a job's steps and lines, a scope's ended jobs — comes first, then the current state. Default on: up
   * to `attempts` tries in a row that deliver nothing (5), `delayMs` apart doubling to 30 s (1,000). `false`: never.
   */
  reconnect?: false | { attempts?: number; delayMs?: number };
}

export interface Subscription {
  /** Resolves when the subscription ends: `code` 1000 when the queue ended it (its job ended), else why it closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** A keep-alive the queue's runtime answers without waking its object (scope/watching/watchers.ts), within idle proxies' limits. */
const PING_EVERY_MS = 30_000;

/** Answers to an open that no reconnect would change: the URL is bad, expired, forged, or its job is not there. */
const REFUSED = new Set([4400, 4401, 4403, 4404]);

export function subscribe(url: string, onMessage: (m: SubscriptionMessage) => void, options: SubscribeOptions = {}): Subscription {
  const transport = options.transport ?? "auto";
  const Socket = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
  const viaStream = transport === "sse" || (transport === "auto" && !Socket);
  const connect = (at: string, deliver: (m: SubscriptionMessage) => void) =>
    viaStream ? overEventStream(at, deliver, options.fetch ?? fetch) : overSocket(at.replace(/^http/, "ws"), deliver, Socket!);
  const retry = options.reconnect === false ? null : { attempts: options.reconnect?.attempts ?? 5, delayMs: options.reconnect?.delayMs ?? 1_000 };
  const cursor = new Cursor();
  let current: Subscription | null = null;
  let stopped = false;
  let wake: (() => void) | null = null;
  const closed = (async () => {
    for (let failures = 0; ; ) {
      // A connection worked if it brought news or stayed open a while: one dropped at once after resending what was
      // seen is a failure, and enough of those in a row end the subscription.
      let delivered = false;
      const opened = Date.now();
      current = connect(cursor.url(url), (m) => {
        if (!cursor.fresh(m)) return;
        delivered = true;
        onMessage(m);
      });
      const end = await current.closed;
      // The queue closes (1000) only once the job it follows ended; any other close is a dropped connection.
      const over = end.code === 1000 && cursor.jobEnded;
      if (stopped || retry === null || over || REFUSED.has(end.code)) return end;
      failures = delivered || Date.now() - opened >= STAYED_OPEN_MS ? 1 : failures + 1;
      if (failures > retry.attempts) return end;
      // Backing off, unless the subscriber closes it meanwhile.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(30_000, retry.delayMs * 2 ** (failures - 1)));
        wake = () => (clearTimeout(t), resolve());
      });
      wake = null;
      if (stopped) return { code: 1000, reason: "closed by the subscriber" };
    }
  })();
  const sub: Subscription = {
    closed,
    close: () => {
      stopped = true;
      current?.close();
      wake?.();
    },
  };
  options.signal?.addEventListener("abort", () => sub.close());
  return sub;
}

/**
 * Cursor: the latest time the queue's own clock put on a subscription's messages (a view's updatedAt, a progress
 * report's time, a step's end) — a reconnect asks for what came after it (`?after=`) — and the step and log messages already given
 * (the newest SEEN_MAX), so a replay never gives one twice: the queue sends the job's steps and lines from a minute
 * before the cursor (a handler's clock may run behind its queue's), and the ones seen are dropped here.
 */
class Cursor {
  private at: number | null = null;
  private readonly seen = new Set<string>();
  /** Each job's latest view as given (the newest SEEN_MAX jobs). */
  private readonly states = new Map<string, string>();
  /** A job's subscription was sent the job's end: the queue closes it after that. */
  jobEnded = false;

  url(base: string): string {
    return this.at === null ? base : `${base}${base.includes("?") ? "&" : "?"}after=${this.at}`;
  }

  /** fresh: whether the message is news (and, when it carries the queue's time, moves the cursor). */
  fresh(m: SubscriptionMessage): boolean {
    if (m.event === "step" || m.event === "log") {
      const text = JSON.stringify(m);
      if (this.seen.has(text)) return false;
      this.seen.add(text);
      if (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.values().next().value!);
      // A step's end is stamped by the queue (its start and a line's time by the handler).
      if (m.event === "step" && m.step.finishedAt !== null) this.advance(m.step.finishedAt);
      return true;
    }
    if (m.event === "state" && "job" in m) {
      // A reconnect's first message is the job's state as it is now: the same view again is no news.
      const text = JSON.stringify(m.job);
      if (this.states.get(m.job.id) === text) return false;
      this.states.delete(m.job.id);
      this.states.set(m.job.id, text);
      if (this.states.size > SEEN_MAX) this.states.delete(this.states.keys().next().value!);
      if (m.job.finishedAt !== null) this.jobEnded = true;
    }
    const at = timeOf(m);
    if (at !== null) this.advance(at);
    return true;
  }

  private advance(at: number): void {
    if (this.at === null || at > this.at) this.at = at;
  }
}

/** A connection open this long before it dropped worked, news or not (a quiet job's subscription). */
const STAYED_OPEN_MS = 30_000;

/** Step and log messages a subscription remembers, to drop them from a reconnect's replay. */
const SEEN_MAX = 2_000;

/** timeOf: the queue's time a state or progress message carries (a view's latest updatedAt, a report's time). */
function timeOf(m: SubscriptionMessage): number | null {
  if (m.event === "progress") return m.at;
  if (m.event !== "state") return null;
  if ("job" in m) return m.job.updatedAt;
  return Math.max(0, ...m.jobs.map((j) => j.updatedAt), ...(m.ended ?? []).map((j) => j.updatedAt)) || null;
}

function overSocket(url: string, onMessage: (m: SubscriptionMessage) => void, Socket: typeof WebSocket): Subscription {
  const ws = new Socket(url);
  let ping: ReturnType<typeof setInterval> | undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener("open", () => {
      ping = setInterval(() => ws.send("ping"), PING_EVERY_MS);
    });
    ws.addEventListener("message", (e) => {
      if (typeof e.data === "string" && e.data !== "pong") onMessage(JSON.parse(e.data) as SubscriptionMessage);
    });
    ws.addEventListener("close", (e) => {
      if (ping !== undefined) clearInterval(ping);
      // A refused open (401 expired, 429 full) closes with 1006: the browser does not show the answer's body.
      resolve({ code: e.code, reason: e.reason || (e.code === 1006 ? "the connection failed or was refused (an expired or forged URL is 401; a full object 429)" : "") });
    });
  });
  return { closed, close: () => ws.close(1000, "closed by the subscriber") };
}

function overEventStream(url: string, onMessage: (m: SubscriptionMessage) => void, fetcher: typeof fetch): Subscription {
  const abort = new AbortController();
  const closed = (async () => {
    let res: Response;
    try {
      res = await fetcher(url, { headers: { accept: "text/event-stream" }, signal: abort.signal });
    } catch (e) {
      return { code: 1006, reason: String(e) };
    }
    if (res.status !== 200 || !res.body) {
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      return { code: res.status === 401 ? 4401 : res.status === 429 ? 4429 : 4000 + (res.status % 1000), reason: body?.error?.message ?? `answered ${res.status}` };
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return { code: 1000, reason: "the stream ended" };
        buffered += value;
        let end: number;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) onMessage(JSON.parse(data) as SubscriptionMessage);
        }
      }
    } catch (e) {
      return abort.signal.aborted ? { code: 1000, reason: "closed by the subscriber" } : { code: 1006, reason: String(e) };
    }
  })();
  return { closed, close: () => abort.abort() };
}

export interface WatchJobHandlers {
  /**
   * Each state change of the job (the first is its state as the subscription opened): its view without what the URL
   * does not carry (no payload unless minted with `include: ["payload", …]`).
   */
  state?(job: WatchedJob): void;
  progress?(progress: unknown, at: number | null): void;
  step?(step: Extract<SubscriptionMessage, { event: "step" }>["step"]): void;
  log?(line: Extract<SubscriptionMessage, { event: "log" }>["line"]): void;
}

/**
 * watchJob: follow one job's subscription URL until the job ends; resolves with its final view (its `result` when
 * completed), rejects when the subscription closes before (an expired or forged URL, a dropped connection).
 */
export function watchJob(url: string, on: WatchJobHandlers = {}, options: SubscribeOptions = {}): Promise<WatchedJob> {
  let last: WatchedJob | null = null;
  const sub = subscribe(
    url,
    (m) => {
      if (m.event === "state" && "job" in m) {
        last = m.job;
        on.state?.(m.job);
      } else if (m.event === "progress") on.progress?.(m.progress, m.at);
      else if (m.event === "step") on.step?.(m.step);
      else if (m.event === "log") on.log?.(m.line);
    },
    options,
  );
  return sub.closed.then((c) => {
    const job = last as WatchedJob | null;
    if (job && job.finishedAt !== null) return job;
    throw new Error(`the subscription closed before the job ended (${c.code}${c.reason ? `: ${c.reason}` : ""})`);
  });
}

/**
 * The live subscriptions a scope object holds (docs/http-api.md "Live subscriptions"): WebSockets accepted with the
 * Hibernation API — the object may leave memory while they stay open, billed nothing until an event wakes it — and
 * Server-Sent Event streams, which keep it in memory while open. Each follows one job, a type's jobs under one
 * dedupe key, or every job here (a scope's object holds only that scope's jobs); the coordinator checked its signed
 * URL before the object heard of it (coordinator/subscriptions.ts).
 *
 * A subscription's first message is the current state, so nothing is missed between a GET and the subscription;
 * then every write's record (changes.ts) is told here by the one commit path (follow-ups.ts), and each watcher of a
 * row gets one JSON message per change (watch-messages.ts). An object with no watchers pays one comparison per write.
 *
 * Bounds: at most `limits.subscribersPerObject` watchers (the next is refused 429); a stream whose reader falls
 * behind by more than STREAM_HIGH_WATER messages, or a socket sent more than SOCKET_MESSAGES_PER_SECOND in a second,
 * is closed — a slow consumer is dropped, never buffered without bound.
 *
 * @module
 */
import { QueueError } from "../../errors";
import type { Subscription } from "../../job/subscription";
import type { JobRow } from "../jobs/job-row";
import type { FeedItem } from "../jobs/feed";
import { byId, idSeq } from "../jobs/read";
import type { Lens } from "../../sealing/lens";
import { carryKey, fedTo, firstMessage, follows, messagesFor, TAG_ALL, tagsOf, watchTags, type Carrying, type Message } from "./watch-messages";

/** Messages a stream may have queued unread before it is dropped. */
export const STREAM_HIGH_WATER = 256;
/** Messages a socket is sent in one second at most; past it, it is closed (1013) and the client opens a new one. */
export const SOCKET_MESSAGES_PER_SECOND = 500;
/** The header the coordinator passes the checked subscription in (coordinator/subscriptions.ts). */
export const SUBSCRIPTION_HEADER = "edgequeue-subscription";
/** The header it passes a reconnect's cursor in: what the subscription's messages carried last (epoch ms). */
export const SUBSCRIPTION_AFTER_HEADER = "edgequeue-subscription-after";

const CORS = { "access-control-allow-origin": "*" };
const JOB_KEY = `SELECT id, type, dedupe_key FROM job WHERE ${byId("?1", "?2")}`;

interface Watcher {
  sub: Subscription;
  send(text: string): boolean;
  close(code: number, reason: string): void;
}

interface Stream extends Watcher {
  writer: WritableStreamDefaultWriter<Uint8Array>;
}

export interface WatcherDeps {
  ctx: DurableObjectState;
  sql: SqlStorage;
  /** Messages are a reader's views: opened, a sensitive type's values redacted (sealing/lens.ts). */
  lens: Lens;
  limit(): number;
  now(): number;
}

export class Watchers {
  private readonly streams = new Set<Stream>();
  /** Hibernatable sockets open here, as the runtime counts them (kept, so a write need not ask). */
  private sockets: number;
  /** Messages each socket was sent in the current second (by the socket itself: it stays the same object while awake). */
  private readonly sent = new WeakMap<WebSocket, { second: number; count: number }>();

  constructor(private readonly d: WatcherDeps) {
    this.sockets = d.ctx.getWebSockets().length;
  }

  get count(): number {
    return this.sockets + this.streams.size;
  }

  /** open: a checked subscription's request — a WebSocket upgrade, or an event stream; the first message is the current state. */
  open(request: Request): Response {
    const sub = JSON.parse(request.headers.get(SUBSCRIPTION_HEADER) ?? "null") as Subscription | null;
    if (!sub) return errorResponse(new QueueError("unauthorized", "a subscription is opened through its URL"));
    const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    const stream = (request.headers.get("accept") ?? "").includes("text/event-stream");
    if (!upgrade && !stream) {
      return errorResponse(new QueueError("invalid_request", "open a subscription URL as a WebSocket, or with a GET that accepts text/event-stream (Server-Sent Events)"));
    }
    if (this.count >= this.d.limit()) {
      return errorResponse(new QueueError("too_many_subscribers", `this object holds ${this.count} subscriptions, its most (limits.subscribersPerObject); try again later or follow fewer jobs`));
    }
    const after = request.headers.get(SUBSCRIPTION_AFTER_HEADER);
    const first = firstMessage(this.d, sub, after === null ? null : Number(after));
    if (first === null) return errorResponse(new QueueError("not_found", `no job ${sub.kind === "job" ? sub.id : ""}`));
    return upgrade ? this.openSocket(sub, first) : this.openStream(sub, first);
  }

  private openSocket(sub: Subscription, first: Message[]): Response {
    const pair = new WebSocketPair();
    const server = pair[1];
    this.d.ctx.acceptWebSocket(server, watchTags(sub));
    server.serializeAttachment(sub);
    this.sockets++;
    const w = this.socketWatcher(server, sub);
    for (const m of first) w.send(JSON.stringify(m));
    if (endsWith(sub, first)) w.close(1000, "the job ended");
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  private openStream(sub: Subscription, first: Message[]): Response {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, new CountQueuingStrategy({ highWaterMark: STREAM_HIGH_WATER }));
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    const stream: Stream = {
      sub,
      writer,
      send: (text) => {
        // desiredSize: how many more the reader's queue takes; at 0 or below the reader is behind, and is dropped.
        if ((writer.desiredSize ?? 0) <= 0) {
          stream.close(1013, "too slow");
          return false;
        }
        void writer.write(encoder.encode(`data: ${text}\n\n`)).catch(() => this.streams.delete(stream));
        return true;
      },
      // The job's end closes it after what it was sent; a reader behind is cut off, its queued messages let go.
      close: (code) => {
        this.streams.delete(stream);
        void (code === 1000 ? writer.close() : writer.abort(new Error("too slow"))).catch(() => undefined);
      },
    };
    this.streams.add(stream);
    // A reader that goes away errors the stream; it is then forgotten at the next write that fails.
    void writer.closed.catch(() => this.streams.delete(stream));
    for (const m of first) stream.send(JSON.stringify(m));
    if (endsWith(sub, first)) stream.close(1000, "the job ended");
    return new Response(readable, { headers: { "content-type": "text/event-stream", "cache-control": "no-store", ...CORS } });
  }

  /**
   * changed: what a write changed — rows as state messages, progress reports, and the steps and log lines it
   * gathered (feed.ts; before the rows, so a job's last lines come before its end) — to every watcher of each job.
   */
  changed(rows: readonly JobRow[], progressed: readonly JobRow[], fed: readonly FeedItem[] = []): void {
    if (this.count === 0) return;
    const known = new Map(rows.map((r) => [r.id, r]));
    for (const item of fed) {
      // The job's type and key say which key watchers follow it: the write's own row, or one read (only when watched).
      const row = known.get(item.id) ?? this.keyOf(item.id);
      // A log line kept sealed is opened here, once, for the watchers it goes to (sealing/lens.ts openSync).
      let told: FeedItem | null = null;
      if (row) this.tell(row, (sub) => (fedTo(item, sub) ? [(told ??= this.d.lens.openSync(item, "reader"))] : []), false);
    }
    for (const row of rows) this.tell(row, messagesFor(row, "state", this.d.lens), isEnded(row));
    for (const row of progressed) this.tell(row, messagesFor(row, "progress", this.d.lens), false);
  }

  private keyOf(id: string): Pick<JobRow, "id" | "type" | "dedupe_key"> | null {
    return this.d.sql.exec<Pick<JobRow, "id" | "type" | "dedupe_key">>(JOB_KEY, id, idSeq(id)).toArray()[0] ?? null;
  }

  /**
   * tell: a row's messages to its watchers — made once for each thing carried (most watchers share one) —; a single
   * job's watcher is closed once they told it the job `ended`.
   */
  private tell(row: Pick<JobRow, "id" | "type" | "dedupe_key">, messages: (sub: Carrying) => Message[], ended: boolean): void {
    const made = new Map<string, string[]>();
    const to = (w: Watcher) => {
      if (!follows(w.sub, row)) return;
      const key = carryKey(w.sub);
      let texts = made.get(key);
      if (texts === undefined) made.set(key, (texts = messages(w.sub).map((m) => JSON.stringify(m))));
      for (const t of texts) if (!w.send(t)) return;
      if (ended && w.sub.kind === "job") w.close(1000, "the job ended");
    };
    if (this.sockets > 0) {
      for (const tag of tagsOf(row)) for (const ws of this.d.ctx.getWebSockets(tag)) to(this.socketWatcher(ws, ws.deserializeAttachment() as Subscription));
    }
    for (const s of [...this.streams]) to(s);
  }

  private socketWatcher(ws: WebSocket, sub: Subscription): Watcher {
    return {
      sub,
      send: (text) => {
        const second = Math.floor(this.d.now() / 1000);
        const seen = this.sent.get(ws);
        const count = seen && seen.second === second ? seen.count + 1 : 1;
        this.sent.set(ws, { second, count });
        if (count > SOCKET_MESSAGES_PER_SECOND) {
          this.closeSocket(ws, 1013, `more than ${SOCKET_MESSAGES_PER_SECOND} messages a second: open a new subscription, or follow fewer jobs`);
          return false;
        }
        try {
          ws.send(text);
          return true;
        } catch {
          this.closeSocket(ws, 1011, "send failed");
          return false;
        }
      },
      close: (code, reason) => this.closeSocket(ws, code, reason),
    };
  }

  private closeSocket(ws: WebSocket, code: number, reason: string): void {
    try {
      ws.close(code, reason);
    } catch {
      // Closed already.
    }
    this.recount();
  }

  /** recount: a socket closed (by either side); the runtime's count is the truth. */
  recount(): void {
    this.sockets = this.d.ctx.getWebSockets().filter((ws) => ws.readyState === WebSocket.OPEN).length;
  }
}

function isEnded(row: Pick<JobRow, "finished_at">): boolean {
  return row.finished_at !== null;
}

/** endsWith: a single job's subscription whose first message already shows it ended. */
function endsWith(sub: Subscription, first: Message[]): boolean {
  return sub.kind === "job" && first.some((m) => m.event === "state" && "job" in m && m.job !== null && m.job.finishedAt !== null);
}

/** errorResponse: the API's error body (docs/http-api.md), readable by a page of any origin. */
function errorResponse(e: QueueError): Response {
  return Response.json(e.toBody(), { status: e.status, headers: CORS });
}

export { TAG_ALL };

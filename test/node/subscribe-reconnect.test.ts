/**
 * `subscribe()`'s reconnect (docs/http-api.md "Reconnecting"), against a stand-in event stream: the cursor it sends
 * is the latest time the queue put on a message — a step's end included, a log line's (the handler's clock) not —
 * what a replay sends again is dropped, and a URL the queue refuses ends it.
 */
import { describe, expect, it, vi } from "vitest";
import { subscribe, type SubscriptionMessage } from "../../src/client/subscribe";

/** A stand-in queue: each connection is answered by the next script, its frames sent and then the stream cut. */
function stream(scripts: (SubscriptionMessage[] | number)[], cutAfterMs = 5) {
  const asked: string[] = [];
  const fetch = (async (url: string) => {
    asked.push(url);
    const script = scripts.shift();
    if (script === undefined) return new Response(JSON.stringify({ error: { message: "gone" } }), { status: 404 });
    if (typeof script === "number") return new Response(JSON.stringify({ error: { message: "refused" } }), { status: script });
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const m of script) c.enqueue(encoder.encode(`data: ${JSON.stringify(m)}\n\n`));
        // Cut, not ended: a dropped connection.
        setTimeout(() => c.error(new Error("connection reset")), cutAfterMs);
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, asked };
}

const job = (updatedAt: number, finishedAt: number | null = null) => ({ id: "j", state: finishedAt === null ? "running" : "completed", updatedAt, finishedAt }) as never;

describe("subscribe's reconnect", () => {
  it("asks from the latest queue time it was sent, a step's end included; a replay's repeats are dropped", async () => {
    const step = { event: "step", id: "j", step: { seq: 0, name: "a", kind: "step", startedAt: 150, finishedAt: 500, attempt: 1 } } as const;
    const line = { event: "log", id: "j", line: { at: 9_999, attempt: 1, message: "handler clock", fields: null } } as const;
    const s = stream([
      [{ event: "state", job: job(100) }, step, line],
      // The replay: the same state, step and line again, then what is new.
      [{ event: "state", job: job(100) }, step, line, { event: "state", job: job(700, 700) }],
    ]);
    const got: SubscriptionMessage[] = [];
    const sub = subscribe("http://q/v1/subscriptions/t", (m) => got.push(m), { transport: "sse", fetch: s.fetch, reconnect: { delayMs: 1 } });
    const end = await sub.closed;
    expect(s.asked).toEqual(["http://q/v1/subscriptions/t", "http://q/v1/subscriptions/t?after=500", "http://q/v1/subscriptions/t?after=700"]);
    expect(got.map((m) => m.event)).toEqual(["state", "step", "log", "state"]);
    // The job ended, and the third connection answered 404: over, not retried.
    expect(end.code).toBe(4404);
  });

  it("an expired URL (401) ends it at once; `attempts` connections in a row that bring nothing new end it too", async () => {
    const refused = stream([401]);
    expect(await subscribe("http://q/s", () => {}, { transport: "sse", fetch: refused.fetch, reconnect: { delayMs: 1 } }).closed).toMatchObject({ code: 4401 });
    expect(refused.asked).toHaveLength(1);
    const same = { event: "state", job: job(100) } as const;
    const quiet = stream([[same], [same], [same], [same], [same], [same], [same], [same]]);
    const end = await subscribe("http://q/s", () => {}, { transport: "sse", fetch: quiet.fetch, reconnect: { attempts: 3, delayMs: 1 } }).closed;
    expect(end.code).toBe(1006);
    // The first brought news; then the three tries `attempts` allows, none with news, and it ends.
    expect(quiet.asked).toHaveLength(4);
  });

  it("a connection that stayed open 30 s or more starts the count again, though it brought nothing new", async () => {
    vi.useFakeTimers();
    try {
      const same = { event: "state", job: job(100) } as const;
      // Eight connections, each cut after 31 s with nothing new: none counts against `attempts`.
      const quiet = stream(Array.from({ length: 8 }, () => [same]), 31_000);
      const sub = subscribe("http://q/s", () => {}, { transport: "sse", fetch: quiet.fetch, reconnect: { attempts: 3, delayMs: 1 } });
      await vi.advanceTimersByTimeAsync(9 * 31_000);
      // All eight, then the ninth connection's 404 ended it, not the tries.
      expect(quiet.asked).toHaveLength(9);
      expect((await sub.closed).code).toBe(4404);
    } finally {
      vi.useRealTimers();
    }
  });
});

/**
 * pull-worker/api.ts against a stand-in fetch that aborts as the Fetch standard
 * says (before the status, the call rejects; after it, the body's read does):
 * the request it makes, refusals as ApiError, and its two ways to end a call.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/pull-worker/answers";
import { jobPath, queueCall } from "../../../src/pull-worker/api";

/** A fetch whose status and body come when the test says. */
function slowFetch() {
  const asked: { url: string; init: RequestInit }[] = [];
  let status!: (s: number) => void;
  let body!: (text: string) => void;
  const fetch = ((url: string, init: RequestInit) => {
    asked.push({ url, init });
    const signal = init.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason));
      status = (s) => {
        let c!: ReadableStreamDefaultController<Uint8Array>;
        const stream = new ReadableStream<Uint8Array>({ start: (x) => void (c = x) });
        signal?.addEventListener("abort", () => c.error(signal.reason));
        body = (text) => {
          c.enqueue(new TextEncoder().encode(text));
          c.close();
        };
        resolve(new Response(stream, { status: s }));
      };
    });
  }) as typeof globalThis.fetch;
  return { fetch, asked, status: (s: number) => status(s), body: (t: string) => body(t) };
}

const turn = () => new Promise((r) => setTimeout(r, 0));

describe("queueCall", () => {
  it("sends JSON with the bearer token to the root's path, and answers the parsed body ({} for none)", async () => {
    const f = slowFetch();
    const call = queueCall("http://q.test", "secret", f.fetch);
    const out = call("POST", `${jobPath("a/b")}/heartbeat`, { leaseToken: "t" });
    await turn();
    expect(f.asked[0]!.url).toBe("http://q.test/v1/jobs/a%2Fb/heartbeat");
    expect(f.asked[0]!.init).toMatchObject({ method: "POST", headers: { authorization: "Bearer secret", "content-type": "application/json" }, body: '{"leaseToken":"t"}', signal: undefined });
    f.status(200);
    f.body('{"leaseExpiresAt":5}');
    expect(await out).toEqual({ leaseExpiresAt: 5 });
    const empty = call("GET", "/v1/types");
    await turn();
    f.status(200);
    f.body("");
    expect(await empty).toEqual({});
  });

  it("a refusal is an ApiError with the queue's status, code, message and details; without an error body, internal", async () => {
    const f = slowFetch();
    const call = queueCall("http://q.test", "t", f.fetch);
    const refused = call("POST", "/v1/claim", {});
    await turn();
    f.status(409);
    f.body(JSON.stringify({ error: { code: "lease_lost", message: "gone", details: { reason: "stale_token" } } }));
    await expect(refused).rejects.toEqual(new ApiError(409, "lease_lost", "gone", { reason: "stale_token" }));
    await expect(refused).rejects.toMatchObject({ status: 409, details: { reason: "stale_token" } });
    const bare = call("POST", "/v1/claim", {});
    await turn();
    f.status(502);
    f.body("");
    await expect(bare).rejects.toMatchObject({ status: 502, code: "internal", message: "HTTP 502" });
  });

  it("untilAnswered ends a call the queue has not begun to answer", async () => {
    const f = slowFetch();
    const ends = new AbortController();
    const out = queueCall("http://q.test", "t", f.fetch)("POST", "/v1/claim", {}, { untilAnswered: ends.signal });
    await turn();
    ends.abort(new Error("stopping"));
    await expect(out).rejects.toThrow("stopping");
  });

  it("untilAnswered no longer ends it once the status is in: the body is read to its end", async () => {
    const f = slowFetch();
    const ends = new AbortController();
    const out = queueCall("http://q.test", "t", f.fetch)("POST", "/v1/claim", {}, { untilAnswered: ends.signal });
    await turn();
    f.status(200);
    await turn();
    ends.abort(new Error("stopping"));
    f.body('{"jobs":[1]}');
    expect(await out).toEqual({ jobs: [1] });
  });

  it("signal ends it at any moment, the body's read too; one already aborted ends it before it is sent", async () => {
    const f = slowFetch();
    const cut = new AbortController();
    const out = queueCall("http://q.test", "t", f.fetch)("POST", "/v1/claim", {}, { signal: cut.signal, untilAnswered: new AbortController().signal });
    await turn();
    f.status(200);
    await turn();
    cut.abort(new Error("past the deadline"));
    await expect(out).rejects.toThrow("past the deadline");

    const gone = AbortSignal.abort(new Error("already"));
    await expect(queueCall("http://q.test", "t", f.fetch)("POST", "/v1/claim", {}, { signal: gone })).rejects.toThrow("already");
  });
});

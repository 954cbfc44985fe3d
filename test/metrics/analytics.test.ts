/** Analytics Engine data points: the documented layout, grouping, the index limit, and a failing dataset never fails a transition. */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ScopeDO } from "../../src/scope/scope-do";
import { freshScope, newJob, partsOf } from "../helpers/scope";
import { checkBindings, parseConfig } from "../../src/config/load";
import { analyticsPoints, eventSource, writePoints } from "../../src/metrics/analytics";

describe("analytics points", () => {
  it("lay out type, outcome, kind, scope, duration, attempt and count as documented", () => {
    const failed = (durationMs: number, attempt: number) =>
      eventSource({ event: "job:failed", at: 1, id: "j", type: "email.send", scope: { type: "Account", id: "a1" }, attempt, maxAttempts: 3, failureKind: "timeout", error: "x", durationMs });
    expect(analyticsPoints([failed(1500, 3), failed(500, 2)])).toEqual([
      { indexes: ["email.send"], blobs: ["email.send", "failed", "timeout", "Account", "a1"], doubles: [2000, 3, 2] },
    ]);
    expect(analyticsPoints([eventSource({ event: "job:started", at: 1, id: "j", type: "t", scope: null, attempt: 1, maxAttempts: 3 })])).toEqual([
      { indexes: ["t"], blobs: ["t", "started", "", "", ""], doubles: [0, 1, 1] },
    ]);
  });

  it("a batch of 1,000 enqueues of one type is one point, and other groups stay apart", () => {
    const many = Array.from({ length: 1000 }, () => ({ type: "t", outcome: "enqueued" as const, scope: null, attempt: 0 }));
    const points = analyticsPoints([...many, { type: "t", outcome: "enqueued", scope: { type: "A", id: "1" }, attempt: 0 }, { type: "u", outcome: "enqueued", scope: null, attempt: 0 }]);
    expect(points.map((p) => [p.blobs?.[0], p.blobs?.[3], p.doubles?.[2]])).toEqual([
      ["t", "", 1000],
      ["t", "A", 1],
      ["u", "", 1],
    ]);
  });

  it("cuts the index to 96 bytes without splitting a character; the blob keeps the whole type", () => {
    const type = `${"é".repeat(60)}`; // 120 bytes
    const [p] = analyticsPoints([{ type, outcome: "completed", scope: null, attempt: 1 }]);
    expect(new TextEncoder().encode(p!.indexes![0] as string).length).toBe(96);
    expect(p!.indexes![0]).toBe("é".repeat(48));
    expect(p!.blobs![0]).toBe(type);
  });

  it("a real object's transitions reach its dataset: enqueue, start, complete", async () => {
    const { home, stub } = await freshScope();
    const points = await runInDurableObject(stub, async (o: ScopeDO) => {
      const written: AnalyticsEngineDataPoint[] = [];
      // The object's own EventSink, given a dataset we can read (the local one drops what it gets).
      (partsOf(o).watching.events as unknown as { analytics: AnalyticsEngineDataset }).analytics = { writeDataPoint: (p?: AnalyticsEngineDataPoint) => void written.push(p!) };
      const scope = { type: "Test", id: "analytics" };
      await o.enqueue([newJob(home, { type: "pulled.analytics", scope }), newJob(home, { type: "pulled.analytics", scope })]);
      const [claimed] = await o.claim({ worker: "w", types: ["pulled.analytics"], limit: 1, leaseMs: 30_000 });
      await o.complete(claimed!.id, claimed!.leaseToken!, null);
      return written;
    });
    expect(points.map((p) => [p.blobs?.[1], p.doubles?.[2]])).toEqual([
      ["enqueued", 2],
      ["started", 1],
      ["completed", 1],
    ]);
    expect(points[0]!.blobs?.[3]).toBe("Test"); // the scope type
  });

  it("a dataset that throws is logged, not thrown, and the other points are still written", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const written: unknown[] = [];
    let first = true;
    const flaky = {
      writeDataPoint(p: unknown) {
        if (first) {
          first = false;
          throw new Error("quota");
        }
        written.push(p);
      },
    } as unknown as AnalyticsEngineDataset;
    const points = analyticsPoints([
      { type: "a", outcome: "completed", scope: null, attempt: 1 },
      { type: "b", outcome: "completed", scope: null, attempt: 1 },
    ]);
    expect(() => writePoints(flaky, points)).not.toThrow();
    expect(written).toEqual([points[1]]);
    expect(logged).toHaveBeenCalledWith(expect.stringContaining('"event":"analytics:failed"'));
    logged.mockRestore();
  });

  it("a config naming a missing dataset binding fails at startup, naming the field", () => {
    const config = parseConfig({ analytics: "QUEUE_ANALYTICS" });
    expect(() => checkBindings(config, {})).toThrow(/EDGEQUEUE_CONFIG\.analytics: no binding named QUEUE_ANALYTICS; add to wrangler.jsonc: "analytics_engine_datasets"/);
    expect(() => checkBindings(config, { QUEUE_ANALYTICS: { writeDataPoint() {} } })).not.toThrow();
  });
});

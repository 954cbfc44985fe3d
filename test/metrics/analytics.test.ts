/** Analytics Engine data points: the documented layout, grouping, the index limit, and a failing dataset never fails a transition. */
import { describe, expect, it } from "vitest";
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

  it("a dataset that throws is logged, not thrown, and the other points are still written", () => {
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
  });

  it("a config naming a missing dataset binding fails at startup, naming the field", () => {
    const config = parseConfig({ analytics: "QUEUE_ANALYTICS" });
    expect(() => checkBindings(config, {})).toThrow(/EDGEQUEUE_CONFIG\.analytics: no binding named QUEUE_ANALYTICS; add an \[\[analytics_engine_datasets\]\]/);
    expect(() => checkBindings(config, { QUEUE_ANALYTICS: { writeDataPoint() {} } })).not.toThrow();
  });
});

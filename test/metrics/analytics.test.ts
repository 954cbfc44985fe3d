/** Analytics Engine data points: the documented layout, and a failing dataset never fails a transition. */
import { describe, expect, it } from "vitest";
import { analyticsPoint, eventPoint, writePoints } from "../../src/metrics/analytics";
import { parseConfig } from "../../src/config/load";
import { checkBindings } from "../../src/config/load";

describe("analytics points", () => {
  it("lay out type, outcome, kind, scope, duration and attempt as documented", () => {
    expect(
      eventPoint({ event: "job:failed", at: 1, id: "j", type: "email.send", scope: { type: "Account", id: "a1" }, attempt: 3, maxAttempts: 3, failureKind: "timeout", error: "x", durationMs: 1500 }),
    ).toEqual({ indexes: ["email.send"], blobs: ["email.send", "failed", "timeout", "Account", "a1"], doubles: [1500, 3] });
    expect(eventPoint({ event: "job:started", at: 1, id: "j", type: "t", scope: null, attempt: 1, maxAttempts: 3 })).toEqual({
      indexes: ["t"],
      blobs: ["t", "started", "", "", ""],
      doubles: [0, 1],
    });
    expect(analyticsPoint({ type: "t", outcome: "enqueued", scope: null, attempt: 0 }).blobs?.[1]).toBe("enqueued");
  });

  it("a dataset that throws is logged, not thrown", () => {
    const broken = { writeDataPoint: () => { throw new Error("quota"); } } as unknown as AnalyticsEngineDataset;
    expect(() => writePoints(broken, [analyticsPoint({ type: "t", outcome: "completed", scope: null, attempt: 1 })])).not.toThrow();
  });

  it("a config naming a missing dataset binding fails at startup, naming the field", () => {
    const config = parseConfig({ analytics: "QUEUE_ANALYTICS" });
    expect(() => checkBindings(config, {})).toThrow(/EDGEQUEUE_CONFIG\.analytics: no binding named QUEUE_ANALYTICS; add an \[\[analytics_engine_datasets\]\]/);
    expect(() => checkBindings(config, { QUEUE_ANALYTICS: { writeDataPoint() {} } })).not.toThrow();
  });
});

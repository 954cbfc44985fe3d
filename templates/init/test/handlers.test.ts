// The handlers, tested in plain Node with edgequeue/testing: no runtime, no queue.
import { runJob } from "edgequeue/testing";
import { describe, expect, it } from "vitest";
import { handlers } from "../src/handlers";

describe("handlers", () => {
  it("welcome.email returns whom it sent to", async () => {
    const run = await runJob(handlers, { to: "ada@example.com" }, { type: "welcome.email" });
    expect(run.state).toBe("completed");
    expect(run.result).toEqual({ sentTo: "ada@example.com" });
  });

  it("order.fulfil resumes after a crash without charging twice", async () => {
    const run = await runJob(handlers, { orderId: "42" }, { type: "order.fulfil", id: "job-1", crashAfter: "charge" });
    expect(run.state).toBe("pending");
    await run.resume();
    expect(run.state).toBe("completed");
    expect(run.steps.map((s) => [s.name, s.attempt])).toEqual([["reserve", 1], ["charge", 1]]);
    expect(run.result).toEqual({ reservation: "reservation-42", charge: "charge-job-1:charge" });
  });
});

/**
 * The scenarios (test/scenarios/*.case.ts) on the real queue: a scope object per scenario on a ManualClock, jobs
 * pushed to the test handler Worker over its service binding, alarms fired with runDurableObjectAlarm
 * (queue-backend.ts). The same scenarios run on edgequeue/testing in test/node/scenarios-kit.test.ts.
 */
import { describe } from "vitest";
import { declareScenarios } from "./index";
import { queueBackend } from "./queue-backend";

describe("scenarios on the queue", () => {
  declareScenarios("queue", queueBackend);
});

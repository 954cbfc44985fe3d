/**
 * The scenarios (test/scenarios/*.case.ts) on edgequeue/testing — createFakeQueue and runJob, one clock
 * (test/scenarios/kit-backend.ts) — with the same handlers the queue runs (test/scenarios/handlers.ts). The same
 * scenarios run on the real queue in test/scenarios/queue.test.ts.
 *
 * In the node project, not the Workers pool: the kit is for plain vitest or Node with no workerd, so this is where
 * its users run it (and the scenario handlers must load there too); it needs nothing of the runtime, and runs in
 * well under a second instead of paying for a Worker's start.
 */
import { describe } from "vitest";
import { T0 } from "../scenarios/backend";
import { scenarioHandlers } from "../scenarios/handlers";
import { declareScenarios } from "../scenarios/index";
import { kitBackend } from "../scenarios/kit-backend";

describe("scenarios on edgequeue/testing", () => {
  declareScenarios("kit", () => kitBackend(scenarioHandlers, T0));
});

/**
 * Every scenario, by group: the runners (test/scenarios/queue.test.ts on the real queue, test/node/scenarios-kit.test.ts
 * on edgequeue/testing) run each group against their backend. A new scenario goes in a group's `.case.ts` file.
 */
import { describe, it } from "vitest";
import type { Backend, Scenario } from "./backend";
import { childScenarios } from "./children.case";
import { guardScenarios } from "./guards.case";
import { keyScenarios } from "./keys.case";
import { retryScenarios } from "./retries.case";
import { stepScenarios } from "./steps.case";
import { eventScenarios, signalScenarios, tokenScenarios } from "./waits.case";

export const scenarioGroups: Record<string, Scenario[]> = {
  "durable steps": stepScenarios,
  retries: retryScenarios,
  "dedupe keys": keyScenarios,
  signals: signalScenarios,
  "wait tokens": tokenScenarios,
  events: eventScenarios,
  "child jobs": childScenarios,
  "guards and leases": guardScenarios,
};

/**
 * declareScenarios: one test per scenario of every group, each on a fresh `backend()`; a scenario the backend does
 * not run is declared skipped, its reason in the test's name — never left out silently.
 */
export function declareScenarios(on: "queue" | "kit", backend: () => Backend): void {
  for (const [group, scenarios] of Object.entries(scenarioGroups)) {
    describe(group, () => {
      for (const s of scenarios) {
        const reason = s.skipOn?.[on];
        if (reason) it.skip(`${s.name} — not on the ${on}: ${reason}`, () => {});
        else it(s.name, () => s.run(backend()));
      }
    });
  }
}

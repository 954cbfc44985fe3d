/**
 * Sending a signal from a job's page (docs/operating.md "Dashboard and metrics"): the page offers a form for each
 * signal the job waits for — an "Approve" button for a person — and this route sends it with the same QueueOps as
 * `POST /v1/jobs/{id}/signals/{name}`. The form carries the session's CSRF token like every other (app.tsx checks
 * it before any route runs).
 *
 * @module
 */
import type { Hono } from "hono";
import type { QueueOps } from "../coordinator/operations";
import { parseInput } from "../coordinator/validate";
import { QueueError } from "../errors";
import { SignalParams, type SignalResult } from "../job/schemas";
import type { DashContext, DashEnv } from "./context";
import { jobHref } from "./pages/jobs";

/** Notices the route redirects with (app.tsx shows them): fixed texts, never text from the query. */
export const SIGNAL_NOTICES: Record<string, () => string> = {
  "signal-resumed": () => "Signal sent: it ended the job's wait, and the job runs again now.",
  "signal-kept": () => "Signal kept: the job is not waiting now; its wait for a signal of that name will take it.",
  "signal-kept-other": () => "Signal kept, but the job waits for something else (see Waiting for) and goes on waiting for it.",
};

/** noticeOf: which notice an answer gets — a kept signal by a job that waits for something else is told apart. */
export function noticeOf(r: SignalResult): keyof typeof SIGNAL_NOTICES {
  if (r.delivered === "resumed") return "signal-resumed";
  return r.waitingFor !== null && r.waitingFor.length > 0 ? "signal-kept-other" : "signal-kept";
}

/** dataOf: the form's `data` — JSON, or nothing for null (a bare "Approve"). */
function dataOf(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = `not JSON (${(e as Error).message}); leave it empty for null, or give a JSON value such as {"approved": true}`;
    throw new QueueError("invalid_request", `data: ${message}`, [{ path: "data", message }]);
  }
}

export function signalRoute(d: Hono<DashEnv>, ops: (c: DashContext) => QueueOps): void {
  d.post("/jobs/:id/signal", async (c) => {
    const form = c.get("form");
    const { id, name } = parseInput(SignalParams, { id: c.req.param("id"), name: form.name }, "form");
    const answer = await ops(c).signals.toJob(id, name, dataOf(form.data));
    return c.redirect(`${jobHref(id)}?done=${noticeOf(answer)}`, 303);
  });
}

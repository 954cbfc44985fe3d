/**
 * A job page's buttons (docs/operating.md "Dashboard and metrics"): retry, rerun, cancel, and pause or resume one
 * job (docs/http-api.md "Pause and resume one job"), each through the same QueueOps as its API call. The forms carry
 * the session's CSRF token like every other (app.tsx checks it, and the operator role, before any route runs).
 *
 * @module
 */
import type { Hono } from "hono";
import type { QueueOps } from "../coordinator/operations";
import { parseInput } from "../coordinator/validate";
import { JobId } from "../job/schemas";
import type { DashContext, DashEnv } from "./context";
import { jobHref } from "./pages/jobs";

/** Notices the routes redirect with (app.tsx shows them): fixed texts, never text from the query. */
export const JOB_NOTICES: Record<string, () => string> = {
  retried: () => "Sent back to pending: due now, attempts 0.",
  rerun: () => "A rerun of the job, due now: this one.",
  cancelled: () => "Cancelled.",
  "job-paused": () => "Paused: nothing runs it until it is resumed.",
  "job-pausing": () => "Asked to pause: it pauses after the step it is in (or when its attempt would go back to pending).",
  "job-resumed": () => "Resumed: pending again at the time it was due.",
};

export function jobRoutes(d: Hono<DashEnv>, ops: (c: DashContext) => QueueOps): void {
  d.post("/jobs/:id/retry", async (c) => {
    const id = parseInput(JobId, c.req.param("id"), "id");
    await ops(c).jobs.retry(id);
    return c.redirect(`${jobHref(id)}?done=retried`, 303);
  });

  // A rerun from the job's start, or from a step of its journal (the steps table's buttons): the new job's page.
  d.post("/jobs/:id/rerun", async (c) => {
    const id = parseInput(JobId, c.req.param("id"), "id");
    const from = c.get("form").fromStep?.trim();
    const job = await ops(c).jobs.rerun(id, from ? from : undefined, undefined);
    return c.redirect(`${jobHref(job.id)}?done=rerun`, 303);
  });

  d.post("/jobs/:id/cancel", async (c) => {
    const id = parseInput(JobId, c.req.param("id"), "id");
    await ops(c).jobs.cancel(id, "cancelled from the dashboard");
    return c.redirect(`${jobHref(id)}?done=cancelled`, 303);
  });

  d.post("/jobs/:id/pause", async (c) => {
    const id = parseInput(JobId, c.req.param("id"), "id");
    const job = await ops(c).jobs.pause(id);
    return c.redirect(`${jobHref(id)}?done=${job.state === "running" ? "job-pausing" : "job-paused"}`, 303);
  });

  d.post("/jobs/:id/resume", async (c) => {
    const id = parseInput(JobId, c.req.param("id"), "id");
    await ops(c).jobs.resume(id);
    return c.redirect(`${jobHref(id)}?done=job-resumed`, 303);
  });
}

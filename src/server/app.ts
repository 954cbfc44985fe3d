/**
 * The queue Worker's HTTP app: the coordinator's API (coordinator/app.ts) with
 * the dashboard mounted beside it. Assembled here, not in the coordinator: the
 * dashboard is a UI over the coordinator's operations (QueueOps), so it
 * depends on the coordinator and the coordinator must not import it back
 * (scripts/check-cycles.mjs).
 *
 * The dashboard's routes are added after the API's: no path is served by
 * both, and the API's `notFound` still answers any path neither serves.
 *
 * @module
 */
import type { Hono } from "hono";
import { createApp } from "../coordinator/app";
import { createDashboard } from "../dashboard/app";
import type { Env } from "../env";
import type { Principal } from "../auth/tokens";

export function createQueueApp(): Hono<{ Bindings: Env; Variables: { principal: Principal } }> {
  const app = createApp();
  // The dashboard has its own sign-in (a session cookie, not the bearer token).
  app.get("/dashboard/", (c) => c.redirect("/dashboard", 301));
  app.route("/dashboard", createDashboard());
  app.get("/", (c) => c.redirect("/dashboard", 302));
  return app;
}

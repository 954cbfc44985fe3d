/** @jsxImportSource hono/jsx */
/**
 * The dashboard's error groups (docs/operating.md "Error groups"): the page, and a group's retry or rerun — the same
 * QueueOps as `GET /v1/errors`, `POST /v1/errors/retry` and `/v1/errors/rerun`.
 *
 * @module
 */
import type { Hono } from "hono";
import type { QueueOps } from "../coordinator/operations";
import { parseInput } from "../coordinator/validate";
import { ErrorGroupActionSchema, ErrorsQuerySchema } from "../job/schemas";
import type { DashContext, DashEnv } from "./context";
import type { PageFrame } from "./layout";
import { ErrorsPage } from "./pages/errors";

/** Notices a group's action redirects with (app.tsx shows them). */
export const ERROR_NOTICES: Record<string, (n: number, m: number) => string> = {
  "group-retry": (n, m) => `${n} failed job${n === 1 ? "" : "s"} of the group sent back to pending${m ? `; ${m} left as they were` : ""}.`,
  "group-rerun": (n, m) => `${n} rerun${n === 1 ? "" : "s"} of the group made${m ? `; ${m} left as they were` : ""}.`,
};

export interface ErrorDeps {
  ops(c: DashContext): QueueOps;
  frame(c: DashContext, title: string): PageFrame;
}

export function errorRoutes(d: Hono<DashEnv>, deps: ErrorDeps): void {
  d.get("/errors", async (c) => {
    const type = c.req.query("type")?.trim() || undefined;
    const q = parseInput(ErrorsQuerySchema, type === undefined ? {} : { type }, "query");
    const r = await deps.ops(c).errors.list(q.type, q.limit);
    return c.html(<ErrorsPage frame={deps.frame(c, "Errors")} items={r.items} complete={r.complete} type={q.type ?? null} />);
  });

  for (const action of ["retry", "rerun"] as const) {
    d.post(`/errors/${action}`, async (c) => {
      const f = c.get("form");
      const g = parseInput(ErrorGroupActionSchema, { type: f.type, fingerprint: f.fingerprint }, "form");
      const r = await deps.ops(c).errors.act(action, g);
      return c.redirect(`/dashboard/errors?type=${encodeURIComponent(g.type)}&done=group-${action}&n=${r.changed}&m=${r.skipped}`, 303);
    });
  }
}

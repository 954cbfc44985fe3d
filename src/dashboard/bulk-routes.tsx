/** @jsxImportSource hono/jsx */
/**
 * The dashboard's bulk actions (docs/operating.md "Dashboard and metrics"): cancel, retry or rerun every job of the jobs
 * list's filter — a confirmation first, with the count a dry run of the API's own operation answers — and prune.
 * They run the same QueueOps as `POST /v1/jobs/cancel`, `/v1/jobs/retry`, `/v1/jobs/rerun` and `/v1/prune`.
 *
 * @module
 */
import type { Hono } from "hono";
import type { QueueOps } from "../coordinator/operations";
import { parseInput } from "../coordinator/validate";
import { QueueError } from "../errors";
import { BULK_LIMIT_MAX, BulkCancelSchema, BulkRerunSchema, BulkRetrySchema, type BulkResult } from "../job/schemas";
import { TERMINAL_STATES } from "../job/states";
import type { BulkAction } from "../job/transitions";
import type { DashContext, DashEnv } from "./context";
import type { PageFrame } from "./layout";
import { BulkConfirmPage, type FilterFields } from "./pages/bulk";

/** Calls of the API's operation one run makes at most (each looks at 1,000 jobs); past it, the notice says more remain. */
const RUN_CALLS = 10;
const RUN_PAGE = 1000;
const FILTER_KEYS = ["type", "state", "scopeType", "scopeId", "tag"] as const;

/** Notices the bulk actions redirect with (app.tsx shows them): fixed texts with counts. */
export const BULK_NOTICES: Record<string, (n: number, m: number) => string> = {
  "bulk-cancel": (n) => `${n} job${n === 1 ? "" : "s"} cancelled.`,
  "bulk-retry": (n, m) => `${n} job${n === 1 ? "" : "s"} sent back to pending${m ? `; ${m} left as they were (a live job holds their dedupe key, or they moved meanwhile)` : ""}.`,
  "bulk-rerun": (n, m) => `${n} rerun${n === 1 ? "" : "s"} made, due now${m ? `; ${m} left as they were (a live job holds their dedupe key)` : ""}.`,
  "bulk-more": (n) => `${n} job${n === 1 ? "" : "s"} done; more match: run it again.`,
  pruned: (n) => `${n} terminal job${n === 1 ? "" : "s"} deleted.`,
};

type Ctx = DashContext;

export interface BulkDeps {
  ops(c: Ctx): QueueOps;
  frame(c: Ctx, title: string): PageFrame;
}

/** bulkRoutes: the bulk actions' routes on the dashboard's app. */
export function bulkRoutes(d: Hono<DashEnv>, deps: BulkDeps): void {
  d.post("/bulk/confirm", async (c) => {
    const { action, fields, body } = readForm(c);
    const dry = await deps.ops(c).bulk.run(action, { ...body, limit: BULK_LIMIT_MAX, dryRun: true });
    const title = { cancel: "Cancel matching jobs?", retry: "Retry matching jobs?", rerun: "Rerun matching jobs?" }[action];
    return c.html(<BulkConfirmPage frame={deps.frame(c, title)} action={action} fields={fields} count={dry.changed} more={dry.nextCursor !== null} back={`/dashboard/jobs?${listQuery(fields)}`} />);
  });

  d.post("/bulk/run", async (c) => {
    const { action, fields, body } = readForm(c);
    const total = { changed: 0, skipped: 0 };
    let cursor: string | null = null;
    for (let i = 0; i < RUN_CALLS; i++) {
      const r: BulkResult = await deps.ops(c).bulk.run(action, { ...body, limit: RUN_PAGE, ...(cursor ? { cursor } : {}) });
      total.changed += r.changed;
      total.skipped += r.skipped;
      cursor = r.nextCursor;
      if (cursor === null) break;
    }
    const done = cursor !== null ? "bulk-more" : `bulk-${action}`;
    return c.redirect(`/dashboard/jobs?${listQuery(fields)}&done=${done}&n=${total.changed}&m=${total.skipped}`, 303);
  });

  d.post("/bulk/prune", async (c) => {
    const given = (c.get("form").olderThanHours ?? "").trim();
    const hours = Number(given);
    if (given === "" || !Number.isFinite(hours) || hours < 0) throw new QueueError("invalid_request", "olderThanHours: must be a number of hours, 0 or more", [{ path: "olderThanHours", message: "must be a number of hours, 0 or more" }]);
    const deleted = await deps.ops(c).fanOut.prune({ olderThan: Math.floor(Date.now() - hours * 3600_000), states: [...TERMINAL_STATES] });
    return c.redirect(`/dashboard/jobs?done=pruned&n=${deleted}`, 303);
  });
}

/** readForm: the action and the list's filter from a bulk form, checked by the API's own schema (400 naming the field). */
function readForm(c: Ctx) {
  const form = c.get("form");
  const action = form.action;
  if (action !== "cancel" && action !== "retry" && action !== "rerun") {
    throw new QueueError("invalid_request", "action: must be cancel, retry or rerun", [{ path: "action", message: "must be cancel, retry or rerun" }]);
  }
  const fields: FilterFields = Object.fromEntries(FILTER_KEYS.filter((k) => form[k]).map((k) => [k, form[k]!]));
  // Lists come as the list's comma-separated text.
  const list = (v: string | undefined) => (v ? v.split(",").map((s) => s.trim()).filter((s) => s !== "") : undefined);
  const filter = { type: list(fields.type), state: list(fields.state), scopeType: fields.scopeType, scopeId: fields.scopeId, tag: fields.tag };
  const defined = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
  const schema = { cancel: BulkCancelSchema, retry: BulkRetrySchema, rerun: BulkRerunSchema }[action];
  const body = parseInput(schema, { filter: defined, ...(action === "cancel" ? { reason: "cancelled from the dashboard" } : {}) }, "form");
  return { action: action as BulkAction, fields, body };
}

function listQuery(fields: FilterFields): string {
  return new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined)).toString();
}

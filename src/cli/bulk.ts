/**
 * `edgequeue jobs cancel`, `jobs retry` and `jobs rerun` given a filter instead of an id (docs/operating.md "The
 * operator CLI"): the API's bulk actions by filter (`POST /v1/jobs/cancel`, `/v1/jobs/retry`, `/v1/jobs/rerun`). Without `--yes` it is a dry run
 * that says how many jobs would change; with it, it goes through every page of the filter.
 *
 * @module
 */
import type { Command } from "commander";
import type { HttpQueueClient } from "../client/http-client";
import type { JobFilter } from "../job/schemas";
import { UsageError } from "./output";

/** Pages of the filter one run goes through at most (each looks at up to 1,000 jobs). */
const MAX_PAGES = 1000;
const PAGE = 1000;

/** filterOptions: the filter's options on a command. */
export function filterOptions(c: Command): Command {
  return c
    .option("--type <types>", "jobs of this type (commas for several)")
    .option("--state <states>", "in this state (commas for several)")
    .option("--failure-kind <kinds>", "failed with this kind (commas for several)")
    .option("--scope <type:id>", "the jobs of one scope")
    .option("--tag <tag>", "carrying this tag")
    .option("--created-after <time>", "created after this time (ISO 8601 or epoch ms)")
    .option("--created-before <time>", "created before this time")
    .option("--finished-after <time>", "finished after this time")
    .option("--finished-before <time>", "finished before this time")
    .option("--all", "every job the action acts on, when no filter option is given")
    .option("--yes", "do it (without it: how many jobs would change)");
}

type FilterOpts = Partial<Record<"type" | "state" | "failureKind" | "tag" | "createdAfter" | "createdBefore" | "finishedAfter" | "finishedBefore", string>> & {
  all?: boolean;
};

/** filterOf: the options as the API's filter, or a usage error naming the option. */
export function filterOf(o: FilterOpts, scope: { type: string; id: string } | undefined): JobFilter {
  const list = (v: string | undefined) => (v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter((s) => s !== ""));
  const time = (name: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isFinite(t)) throw new UsageError(`--${name} ${v}: give a time as ISO 8601 (2026-12-01T12:00:00Z) or epoch ms`);
    return t;
  };
  const filter = {
    type: list(o.type),
    state: list(o.state),
    failureKind: list(o.failureKind),
    tag: o.tag,
    scopeType: scope?.type,
    scopeId: scope?.id,
    createdAfter: time("created-after", o.createdAfter),
    createdBefore: time("created-before", o.createdBefore),
    finishedAfter: time("finished-after", o.finishedAfter),
    finishedBefore: time("finished-before", o.finishedBefore),
  };
  const given = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
  if (Object.keys(given).length === 0 && !o.all) throw new UsageError("give a job id, or a filter (--type, --state, --scope, --tag, --failure-kind, --created-…, --finished-…), or --all");
  return given as JobFilter;
}

/** runBulk: a dry run, or every page of the action; what to print. */
export async function runBulk(client: HttpQueueClient, action: "cancel" | "retry" | "rerun", filter: JobFilter, o: { yes?: boolean; reason?: string; from?: string }): Promise<{ body: unknown; text: string }> {
  const call = (body: { filter: JobFilter; limit: number; cursor?: string; dryRun?: boolean }) =>
    action === "cancel"
      ? client.cancelJobs({ ...body, ...(o.reason ? { reason: o.reason } : {}) } as never)
      : action === "rerun"
        ? client.rerunJobs({ ...body, ...(o.from ? { fromStep: o.from } : {}) } as never)
        : client.retryJobs(body as never);
  const verb = action;
  if (!o.yes) {
    let count = 0;
    let cursor: string | undefined;
    for (let i = 0; i < MAX_PAGES; i++) {
      const r = await call({ filter, limit: 10_000, dryRun: true, ...(cursor ? { cursor } : {}) });
      count += r.changed;
      cursor = r.nextCursor ?? undefined;
      if (!cursor) break;
    }
    return { body: { matched: count, dryRun: true }, text: `would ${verb} ${count} job${count === 1 ? "" : "s"}; run it again with --yes to do it` };
  }
  const total = { changed: 0, skipped: 0 };
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await call({ filter, limit: PAGE, ...(cursor ? { cursor } : {}) });
    total.changed += r.changed;
    total.skipped += r.skipped;
    cursor = r.nextCursor ?? undefined;
    if (!cursor) break;
  }
  const done = { cancel: "cancelled", retry: "retried", rerun: "reruns made:" }[action];
  return { body: { ...total, nextCursor: cursor ?? null }, text: `${done} ${total.changed}${total.skipped ? `, skipped ${total.skipped}` : ""}${cursor ? ` (more remain: run it again)` : ""}` };
}

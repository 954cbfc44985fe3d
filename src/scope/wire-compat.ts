/**
 * One release's bridge across a deploy. Durable Objects defer a code update
 * for up to 5 minutes while an object is busy (Cloudflare's "Durable Objects
 * code updates"), so right after a deploy the coordinator's new code may call
 * a scope object still running the previous version, which answered its
 * jobs as table rows (`row`, `results[].row`, arrays of rows) where this one
 * answers views (wire.ts). `fromPrevious` reads such an answer as the wire
 * type; an answer already in it passes through unchanged. Remove once every
 * deployment runs a version that answers views (docs/deploy.md "Deploy", During a deploy).
 *
 * @module
 */
import { toJob, toLeasedJob, type JobRow } from "./jobs/job-row";
import type { JobPage } from "./wire";
import { PLAIN_LENS } from "../sealing/lens";

type Loose = Record<string, unknown>;

const isRow = (v: unknown): v is JobRow => typeof v === "object" && v !== null && "scope_type" in v && "run_at" in v;
// The previous version sealed nothing: its rows' values are plain JSON.
const leased = (v: unknown) => (isRow(v) ? toLeasedJob(v, PLAIN_LENS) : v);
const viewed = (v: unknown) => (isRow(v) ? toJob(v, PLAIN_LENS) : v);

/** settledOf: `{ok, row}` → `{ok, job}`. */
function settledOf(out: unknown): unknown {
  if (typeof out !== "object" || out === null || !("row" in out)) return out;
  const { row, ...rest } = out as Loose;
  return { ...rest, job: viewed(row) };
}

/** enqueuedOf: `{ok, results: [{row, created}]}` → `{ok, results: [{job, created}]}`. */
function enqueuedOf(out: unknown): unknown {
  const o = out as Loose | null;
  if (!o || !Array.isArray(o.results)) return out;
  return { ...o, results: (o.results as Loose[]).map((r) => ("row" in r ? { job: r.row === null ? null : viewed(r.row), created: r.created } : r)) };
}

/**
 * fromPrevious: `method`'s answer from a scope object of the previous version, as this version's wire type.
 * `limit`: a listing's page size (the previous version answered up to that many rows, with no word of more).
 */
export function fromPrevious(method: string, out: unknown, limit?: number): unknown {
  switch (method) {
    case "get":
      return viewed(out);
    case "claim":
      return Array.isArray(out) ? out.map(leased) : out;
    case "claimKey":
      return leased(out);
    case "list": {
      if (!Array.isArray(out)) return out;
      const rows = out as JobRow[];
      const last = rows[rows.length - 1];
      // No word of more: a full page says go on (at worst one empty page more).
      return { jobs: rows.map((r) => toJob(r, PLAIN_LENS)), next: last && limit !== undefined && rows.length >= limit ? last.seq : null } satisfies JobPage;
    }
    case "enqueue":
    case "commitBatch":
      return enqueuedOf(out);
    case "commitDecidingBatch": {
      const o = out as Loose | null;
      return o && o.decision === "commit" ? { ...o, outcome: enqueuedOf(o.outcome) } : out;
    }
    case "claimOrEnqueue": {
      const o = out as Loose | null;
      return o && o.ok === true && isRow(o.job) ? { ...o, job: toJob(o.job, PLAIN_LENS), leased: leased(o.leased) } : out;
    }
    case "complete":
    case "fail":
    case "release":
    case "sleep":
    case "appendStep":
    case "resolveStep":
    case "cancel":
    case "retry":
    case "pause":
    case "resume":
      return settledOf(out);
    default:
      return out;
  }
}

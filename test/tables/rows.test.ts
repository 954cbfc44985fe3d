/**
 * The hand-written row types against the drizzle tables they read (src/tables/sql-row.ts). The assertions are types:
 * `npm run check` (tsc over test/) is what fails when a row type drifts from its table — a column added, dropped,
 * renamed or retyped on one side only.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { JobRow } from "../../src/scope/jobs/job-row";
import type { ScheduleRow } from "../../src/schedule/schedule-store";
import type { schedule } from "../../src/tables/schedule";
import type { job } from "../../src/tables/scope";
import type { SqlRow } from "../../src/tables/sql-row";

/**
 * The job table's columns that only the statements read (counting, id lookup, ordering, child ends) or that a reader
 * of its own reads (the journal's share in the row: scope/workflow/journal-row.ts; a completion's log lines: scope/jobs/job-logs.ts; held retries' timeline entries: scope/jobs/timeline.ts): not
 * in JobRow.
 */
type OnlyInSql = "tally" | "own_id" | "id_seq" | "ordered" | "parent_seq" | "children_open" | "journal" | "logs" | "history";

describe("row types", () => {
  it("JobRow is the job table's row, less the columns only the statements read", () => {
    expectTypeOf<JobRow>().toEqualTypeOf<Omit<SqlRow<typeof job>, OnlyInSql>>();
  });

  it("the schedule store's row is the schedule table's", () => {
    expectTypeOf<ScheduleRow>().toEqualTypeOf<SqlRow<typeof schedule>>();
  });
});

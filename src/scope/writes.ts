/**
 * The scope object's writes, each returning its answer and the record of what
 * it changed (jobs/changes.ts): the core's (jobs/job-writes.ts) and each
 * capability's, joined in one table. `ScopeDO` runs a write and hands the
 * record to `FollowUps.run`, and does nothing else (docs/design.md "One commit
 * path"). The table test holds each record.
 *
 * @module
 */
import { jobWrites } from "./jobs/job-writes";
import { pushWrites } from "./push/push-writes";
import { watchingWrites } from "./watching/watching-writes";
import { workflowWrites } from "./workflow/workflow-writes";

export { enqueuedChanges, reportFor } from "./jobs/job-writes";

export const writes = { ...jobWrites, ...workflowWrites, ...watchingWrites, ...pushWrites };

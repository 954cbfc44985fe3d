/**
 * What a scope object offers the rest of the queue over RPC: the types its
 * methods take and answer, and the few functions that read them (a row's
 * view, a job made ready for its home). The coordinator and the schedule
 * object import this module and no other file of scope/ — the boundary that
 * lets the scope object's inside change (docs/design.md "One commit path");
 * `npm run check` holds it (scripts/check-cycles.mjs, BOUNDARIES).
 *
 * @module
 */
export type { ScopeDO } from "./scope-do";
export type { NewJob, Enqueued, EnqueueOutcome, EnqueueRefusal } from "./enqueue";
export type { Decision, DecidingAnswer } from "./batch-stage";
export type { FailedCursor } from "./change";
export type { WorkerLogItem } from "./job-logs";
export type { Outcome, Refusal } from "./outcome";
export type { InlineClaim } from "./inline-claim";
export type { HomeSummary, TypeSummary } from "./summary";
export { toJob, toLeasedJob, scopeOfRow, type JobRow } from "./job-row";
export { prepareJob } from "./new-job";
export { zeroKinds } from "./summary";

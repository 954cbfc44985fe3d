/**
 * `WorkflowEntrypoint` as Cloudflare Workflows declares it, run as an edgequeue job type (docs/coming-from/workflows.md):
 * a class written for Workflows runs after changing its import — `workflowHandler(MyWorkflow)` is its type's handler
 * in `defineHandlers`. Each attempt builds the class with the handler Worker's `env` and calls `run(event, step)`;
 * what `run` returns is the job's result (an object as it is, anything else as `{ value }`), a throw retries the job
 * (replaying the steps it journaled), a `NonRetryableError` fails it for good.
 *
 * @module
 */
import type { JobContext } from "../runtime/context";
import { WorkflowStep } from "./step";

/** The event `run` gets: the instance's `params` as `payload`, when it was created, and its id. */
export interface WorkflowEvent<T> {
  payload: Readonly<T>;
  timestamp: Date;
  instanceId: string;
}

/** The little of an ExecutionContext a workflow reaches: `waitUntil` (kept to the attempt's end). */
export interface WorkflowExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

export abstract class WorkflowEntrypoint<Env = unknown, Params = unknown> {
  constructor(
    protected readonly ctx: WorkflowExecutionContext,
    protected readonly env: Env,
  ) {}

  abstract run(event: Readonly<WorkflowEvent<Params>>, step: WorkflowStep): Promise<unknown>;
}

type WorkflowClass<Env, Params> = new (ctx: WorkflowExecutionContext, env: Env) => WorkflowEntrypoint<Env, Params>;

/**
 * workflowHandler: a WorkflowEntrypoint class as a job type's handler — `defineHandlers({ "order.flow":
 * workflowHandler(OrderFlow) })`; the job's payload is `event.payload`, its id `event.instanceId`.
 */
export function workflowHandler<Env, Params>(Workflow: WorkflowClass<Env, Params>): (payload: Params, ctx: JobContext) => Promise<unknown> {
  return async (payload, ctx) => {
    const waits: Promise<unknown>[] = [];
    const instance = new Workflow({ waitUntil: (p) => void waits.push(p) }, ctx.env as Env);
    // When the instance was created: its first attempt's start, the same on every replay (ctx.now() before a step).
    const event: WorkflowEvent<Params> = { payload, timestamp: new Date(ctx.runAt), instanceId: ctx.id };
    try {
      return await instance.run(event, new WorkflowStep(ctx));
    } finally {
      await Promise.allSettled(waits);
    }
  };
}

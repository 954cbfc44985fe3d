/**
 * `edgequeue/testing`: test what users write, in plain vitest or Node — no
 * workerd, no queue (docs/handlers.md "Durable steps", "Testing a handler", "Test
 * doubles").
 *
 * - `runJob(handler, payload, options)`: a handler run over an in-memory
 *   journal, with crashes where you say (run-job.ts);
 * - `createFakeQueue()` / `createInlineQueue(handlers)`: producer clients that
 *   record jobs, or run them in process (fake-queue.ts).
 *
 * @module
 */
export { runJob, type AnyHandler, type AnyHandlers, type AttemptOptions, type RunOptions, type TestChild, type TestChildEnd, type TestLog, type TestOutcome, type TestRun, type TestState, type TestStep } from "./run-job";
export { createFakeQueue, createInlineQueue, type FakeQueue } from "./fake-queue";
export type { Handlers, JobContext, JobHandler, StepOptions, StepRun, EventWaitOptions, InvokeRequest, WaitedEvent, WaitOptions, WaitToken } from "../runtime/context";

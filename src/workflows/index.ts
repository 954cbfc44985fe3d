/**
 * `edgequeue/workflows`: the Cloudflare Workflows API on the queue (docs/coming-from/workflows.md). A class written
 * for Workflows — `extends WorkflowEntrypoint`, `run(event, step)` — runs as a job type after changing its import;
 * `createWorkflow(client, type)` is the binding-shaped client.
 *
 * @module
 */
export { WorkflowEntrypoint, workflowHandler, type WorkflowEvent, type WorkflowExecutionContext } from "./entrypoint";
export { NonRetryableError, WorkflowStep, type WorkflowBackoff, type WorkflowDuration, type WorkflowStepConfig, type WorkflowStepEvent } from "./step";
export { createWorkflow, statusOf, type InstanceStatus, type InstanceStatusName, type Workflow, type WorkflowInstance, type WorkflowsQueueClient } from "./client";

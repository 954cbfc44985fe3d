/**
 * A Workflows binding's client over edgequeue (docs/coming-from/workflows.md): `create({ id, params })`,
 * `createBatch`, `get(id)`, and an instance's `status()`, `sendEvent`, `pause`, `resume`, `terminate`, `restart` — with Cloudflare's
 * status names. An instance is a job of the workflow's type: its id the job's, its params the payload.
 *
 * @module
 */
import type { JsonObject } from "../job/json-safe";

/** The client calls used (`createClient(env.QUEUE)` or `createHttpClient(...)` from `edgequeue` has them all). */
export interface WorkflowsQueueClient {
  enqueue(input: { type: string; payload: JsonObject; id?: string }): Promise<{ id: string; job: unknown }>;
  enqueueMany(inputs: { type: string; payload: JsonObject; id?: string }[]): Promise<{ id: string; created: boolean }[]>;
  get(id: string, where?: { type?: string }): Promise<JobLike>;
  cancel(id: string, reason?: string): Promise<unknown>;
  signal(id: string, name: string, data?: unknown): Promise<unknown>;
  /** The job a rerun made (the clients answer the new job itself). */
  rerunJob(id: string, body: Record<string, unknown>): Promise<JobLike>;
  pauseJob(id: string): Promise<unknown>;
  resumeJob(id: string): Promise<unknown>;
}

type JobLike = { id: string; state: string; startedAt: number | null; result: unknown; lastError: string | null; waitingFor?: { kind: string }[] | null };

export type InstanceStatusName = "queued" | "running" | "paused" | "errored" | "terminated" | "complete" | "waiting" | "waitingForPause" | "unknown";

export interface InstanceStatus {
  status: InstanceStatusName;
  error?: { name: string; message: string };
  output?: unknown;
}

export interface WorkflowInstance {
  id: string;
  status(): Promise<InstanceStatus>;
  sendEvent(event: { type: string; payload?: unknown }): Promise<void>;
  terminate(): Promise<void>;
  restart(): Promise<WorkflowInstance>;
  pause(): Promise<void>;
  resume(): Promise<void>;
}

export interface Workflow<Params = unknown> {
  create(options?: { id?: string; params?: Params }): Promise<WorkflowInstance>;
  createBatch(batch: { id?: string; params?: Params }[]): Promise<WorkflowInstance[]>;
  get(id: string): Promise<WorkflowInstance>;
}

/** statusOf: a job's state in Workflows' words. */
export function statusOf(job: JobLike): InstanceStatus {
  switch (job.state) {
    // Never started: queued. A sleep, a wait's end or a retry's backoff left it pending after it ran: waiting (a sleep
    // gives its attempt back, so `attempts` cannot tell).
    case "pending":
      return { status: job.startedAt === null ? "queued" : "waiting" };
    // A pause shows among its waits (docs/http-api.md "Pause and resume one job"): asked of a running job, which
    // pauses at its next step, or in force.
    case "running":
      return { status: paused(job) ? "waitingForPause" : "running" };
    case "waiting":
      return { status: paused(job) ? "paused" : "waiting" };
    case "completed":
      return { status: "complete", output: job.result };
    case "failed":
      return { status: "errored", error: { name: "Error", message: job.lastError ?? "failed" } };
    case "cancelled":
    case "superseded":
    case "expired":
      return { status: "terminated" };
    default:
      return { status: "unknown" };
  }
}

function paused(job: JobLike): boolean {
  return job.waitingFor?.some((w) => w.kind === "pause") === true;
}

/** createWorkflow: the binding-shaped client of the workflow whose job type is `type`. */
export function createWorkflow<Params extends JsonObject = JsonObject>(client: WorkflowsQueueClient, type: string): Workflow<Params> {
  const instance = (id: string): WorkflowInstance => ({
    id,
    status: async () => statusOf(await client.get(id)),
    sendEvent: async ({ type: name, payload }) => {
      if (typeof name !== "string" || name === "") throw new TypeError("sendEvent: give the event's type");
      await client.signal(id, name, payload ?? null);
    },
    terminate: async () => void (await client.cancel(id, "terminated")),
    // A rerun: a new job (a new id) with the same params, from the start (docs/coming-from/workflows.md "restart").
    restart: async () => instance((await client.rerunJob(id, {})).id),
    // A running instance pauses after its current step; a paused one resumes where it stopped (docs/coming-from/workflows.md).
    pause: async () => void (await client.pauseJob(id)),
    resume: async () => void (await client.resumeJob(id)),
  });
  return {
    create: async (options = {}) => instance((await client.enqueue({ type, payload: (options.params ?? {}) as JsonObject, ...(options.id ? { id: options.id } : {}) })).id),
    createBatch: async (batch) => (await client.enqueueMany(batch.map((b) => ({ type, payload: (b.params ?? {}) as JsonObject, ...(b.id ? { id: b.id } : {}) })))).map((r) => instance(r.id)),
    get: async (id) => instance((await client.get(id, { type })).id),
  };
}

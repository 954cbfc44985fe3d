/**
 * Calling the real coordinator Worker (the main module) over fetch, the way a
 * producer or pull worker does.
 */
import { env as workersEnv, exports } from "cloudflare:workers";
import type { Env } from "../../src/env";
import { homeOfJobId } from "../../src/job/home";
import { TERMINAL_STATES } from "../../src/job/states";

export const TOKEN = "test-token";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function api<T = any>(method: string, path: string, body?: unknown, token: string | null = TOKEN): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await (exports as any).default.fetch(`http://queue.test${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** A fresh scope per test: storage is shared within a file. */
export function uniqueScope(prefix = "t"): { type: string; id: string } {
  return { type: "Tenant", id: `${prefix}-${crypto.randomUUID()}` };
}

/** A fresh job type per test, so type objects do not share state between tests. */
export function uniqueType(prefix = "t"): string {
  return `${prefix}.${crypto.randomUUID().slice(0, 8)}`;
}


/** flushJobs waits until the catalog has every change of the homes of these job ids (no sleeping). */
export async function flushJobs(...ids: string[]): Promise<void> {
  const env = workersEnv as unknown as Env;
  const homes = new Set(ids.map((id) => homeOfJobId(id)!.name));
  await Promise.all([...homes].map((h) => env.SCOPE.getByName(h).flushCatalog()));
}

/** waitForJob polls the job until `done` holds (handlers run in real time; nothing here sleeps blindly). */
export async function waitForJob(id: string, done: (job: any) => boolean, timeoutMs = 10_000): Promise<any> {
  const { vi } = await import("vitest");
  return vi.waitFor(
    async () => {
      const r = await api("GET", `/v1/jobs/${id}`);
      if (!done(r.body.job)) throw new Error(`job ${id} is ${JSON.stringify(r.body.job?.state)} (attempt ${r.body.job?.attempts})`);
      return r.body.job;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

/** isTerminal: the job reached a state it never leaves; the list is the queue's own (job/states.ts), superseded included. */
export const isTerminal = (job: any) => (TERMINAL_STATES as readonly string[]).includes(job.state);

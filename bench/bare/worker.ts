/**
 * The baselines the bench divides by (bench/README.md), each the least a
 * Durable Object can do for the job — not part of the queue:
 *
 * - `POST /`: one SQLite INSERT per RPC (`enqueueVsBareInsert`);
 * - `POST /insert-jobs {jobs}`: one request's jobs inserted in one statement
 *   into a table with a job's columns and the two indexes any queue needs (by
 *   id, and in claim order), answered with their ids, as a batch enqueue's body
 *   reaches it over the same HTTP path (`batchEnqueueVsBareBatch`);
 * - `POST /fill {n}` then `POST /claim`: n rows, then one row claimed per
 *   request (`pullDrainVsBareClaim`).
 */
import { DurableObject } from "cloudflare:workers";

export class BareDO extends DurableObject {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS item (seq INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)");
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS task (seq INTEGER PRIMARY KEY, body TEXT NOT NULL, claimed_at INTEGER)");
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS task_free_idx ON task (seq) WHERE claimed_at IS NULL");
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS job (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL, scope_type TEXT, scope_id TEXT,
      state TEXT NOT NULL, priority INTEGER NOT NULL, run_at INTEGER NOT NULL, attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
      timeout_ms INTEGER, dedupe_key TEXT, tags TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`);
    ctx.storage.sql.exec("CREATE UNIQUE INDEX IF NOT EXISTS job_id_idx ON job (id)");
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS job_claim_idx ON job (type, priority DESC, run_at, seq) WHERE state = 'pending'");
  }

  async insert(body: string): Promise<number> {
    return this.ctx.storage.sql.exec<{ seq: number }>("INSERT INTO item (body, created_at) VALUES (?, ?) RETURNING seq", body, Date.now()).one().seq;
  }

  /** insertJobs: one batch's jobs in one statement (json_each) into the job table, answered with their ids. */
  async insertJobs(jobs: { type: string; payload: unknown }[]): Promise<string[]> {
    const now = Date.now();
    const rows = jobs.map((j) => [crypto.randomUUID(), j.type, JSON.stringify(j.payload)]);
    const sql = `INSERT INTO job (id, type, payload, state, priority, run_at, attempts, max_attempts, tags, created_at, updated_at)
      SELECT v.value ->> 0, v.value ->> 1, v.value ->> 2, 'pending', 0, ?1, 0, 3, '[]', ?1, ?1 FROM json_each(?2) AS v RETURNING id`;
    return this.ctx.storage.sql.exec<{ id: string }>(sql, now, JSON.stringify(rows)).toArray().map((r) => r.id);
  }

  async fill(n: number, body: string): Promise<number> {
    for (let i = 0; i < n; i++) this.ctx.storage.sql.exec("INSERT INTO task (body) VALUES (?)", body);
    return n;
  }

  async claim(): Promise<{ seq: number; body: string } | null> {
    const sql = "UPDATE task SET claimed_at = ? WHERE seq = (SELECT seq FROM task WHERE claimed_at IS NULL ORDER BY seq LIMIT 1) RETURNING seq, body";
    return this.ctx.storage.sql.exec<{ seq: number; body: string }>(sql, Date.now()).toArray()[0] ?? null;
  }
}

interface Env {
  BARE: DurableObjectNamespace<BareDO>;
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const url = new URL(req.url);
    const bare = env.BARE.getByName("bare");
    if (url.pathname === "/v1/health") return Response.json({ ok: true });
    if (req.method === "POST" && url.pathname === "/insert-jobs") {
      const { jobs } = await req.json<{ jobs: { type: string; payload: unknown }[] }>();
      return Response.json({ ids: await bare.insertJobs(jobs) });
    }
    if (req.method === "POST" && url.pathname === "/fill") {
      const { n, body } = await req.json<{ n: number; body: string }>();
      return Response.json({ filled: await bare.fill(n, body) });
    }
    if (req.method === "POST" && url.pathname === "/claim") return Response.json({ task: await bare.claim() });
    const body = await req.text();
    const seq = await bare.insert(body);
    return Response.json({ seq }, { status: 201 });
  },
} satisfies ExportedHandler<Env>;

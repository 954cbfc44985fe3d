/**
 * The baselines the bench divides by (bench/README.md), each the least a
 * Durable Object can do for the job — not part of the queue:
 *
 * - `POST /`: one SQLite INSERT per RPC (`enqueueVsBareInsert`);
 * - `POST /insert-loop {n}`: n INSERTs in a loop inside one event
 *   (`batchEnqueueVsInEventInsert`);
 * - `POST /insert-batch {jobs}`: one request's jobs inserted in one statement, as
 *   a batch enqueue's body reaches it over the same HTTP path
 *   (`batchEnqueueVsBareBatchInsert`);
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
  }

  async insert(body: string): Promise<number> {
    return this.ctx.storage.sql.exec<{ seq: number }>("INSERT INTO item (body, created_at) VALUES (?, ?) RETURNING seq", body, Date.now()).one().seq;
  }

  async insertLoop(n: number, body: string): Promise<number> {
    const now = Date.now();
    for (let i = 0; i < n; i++) this.ctx.storage.sql.exec("INSERT INTO item (body, created_at) VALUES (?, ?)", body, now);
    return n;
  }

  /** insertBatch: one batch's rows in one statement (json_each), answered with their seqs, as a batch enqueue answers ids. */
  async insertBatch(bodies: string[]): Promise<number[]> {
    const sql = "INSERT INTO item (body, created_at) SELECT value, ? FROM json_each(?) RETURNING seq";
    return this.ctx.storage.sql.exec<{ seq: number }>(sql, Date.now(), JSON.stringify(bodies)).toArray().map((r) => r.seq);
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
    if (req.method === "POST" && url.pathname === "/insert-loop") {
      const { n, body } = await req.json<{ n: number; body: string }>();
      return Response.json({ inserted: await bare.insertLoop(n, body) });
    }
    if (req.method === "POST" && url.pathname === "/insert-batch") {
      const { jobs } = await req.json<{ jobs: unknown[] }>();
      return Response.json({ seqs: await bare.insertBatch(jobs.map((j) => JSON.stringify(j))) });
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

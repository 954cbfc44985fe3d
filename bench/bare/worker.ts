/**
 * The baseline for `enqueueVsBareInsert`: a Worker that forwards each request
 * to one Durable Object doing one SQLite INSERT per RPC — the least a durable
 * enqueue can cost on this platform. Not part of the queue.
 */
import { DurableObject } from "cloudflare:workers";

export class BareDO extends DurableObject {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS item (seq INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)");
  }

  async insert(body: string): Promise<number> {
    return this.ctx.storage.sql.exec<{ seq: number }>("INSERT INTO item (body, created_at) VALUES (?, ?) RETURNING seq", body, Date.now()).one().seq;
  }
}

interface Env {
  BARE: DurableObjectNamespace<BareDO>;
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const body = await req.text();
    const seq = await env.BARE.getByName("bare").insert(body);
    return Response.json({ seq }, { status: 201 });
  },
} satisfies ExportedHandler<Env>;

/**
 * The soak's auditor: the queue's `observer`, counting every lifecycle event
 * it is sent per (job, event) in one Durable Object's SQLite. The soak reads
 * the counts back over HTTP and checks them against the queue's own job
 * records: a second `job:completed` for one job is a duplicated completion;
 * `job:started` events per job against its recorded attempts shows whether
 * attempts were counted exactly. Observer calls are best effort (the queue
 * never holds a transition back for them), so a missing event is reported
 * apart from the invariants. Not part of the queue.
 */
import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";

interface Env {
  LEDGER: DurableObjectNamespace<Ledger>;
  /** The coordinator: requests that are not the auditor's own go to it. */
  QUEUE: Fetcher;
}

interface Event {
  event: string;
  id: string;
}

export class Ledger extends DurableObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env as never);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS seen (id TEXT NOT NULL, event TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (id, event)) WITHOUT ROWID");
  }

  async record(events: Event[]): Promise<void> {
    for (const e of events) {
      this.ctx.storage.sql.exec("INSERT INTO seen (id, event, n) VALUES (?, ?, 1) ON CONFLICT (id, event) DO UPDATE SET n = n + 1", e.id, e.event);
    }
  }

  /** Every job's counts: [id, event, n] rows. */
  async counts(): Promise<[string, string, number][]> {
    return this.ctx.storage.sql.exec<{ id: string; event: string; n: number }>("SELECT id, event, n FROM seen").toArray().map((r) => [r.id, r.event, r.n]);
  }
}

/** The entrypoint the queue's `observer` binding names. */
export class Auditor extends WorkerEntrypoint<Env> {
  async observe(events: Event[]): Promise<void> {
    await this.env.LEDGER.getByName("ledger").record(events.map((e) => ({ event: e.event, id: e.id })));
  }
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const ledger = env.LEDGER.getByName("ledger");
    const { pathname } = new URL(req.url);
    if (pathname === "/counts") return Response.json(await ledger.counts());
    return env.QUEUE.fetch(req);
  },
} satisfies ExportedHandler<Env>;

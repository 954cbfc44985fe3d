/**
 * The baseline for `pushDrainVsCfQueues`: Cloudflare Queues as wrangler dev
 * runs them (miniflare's queue broker, the same workerd as the queue), a
 * producer that sends what it is posted (`sendBatch`, 100 messages a call) and
 * a no-op consumer that acks batches of up to 100. `GET /stats` says how many
 * were consumed and when the last batch was; `GET /started?probe=` when a
 * message that carried that probe id was consumed. Not part of the queue.
 */

interface Env {
  Q: Queue<unknown>;
}

let consumed = 0;
let lastAt = 0;
/** probe id → when the consumer got it (bench:peers' pickup and delay figures). */
const started = new Map<string, number>();

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/v1/health") return Response.json({ ok: true });
    if (url.pathname === "/stats") return Response.json({ consumed, lastAt });
    if (url.pathname === "/started") return Response.json({ at: started.get(url.searchParams.get("probe") ?? "") ?? null });
    if (req.method === "POST" && url.pathname === "/send") {
      const { messages, delaySeconds } = await req.json<{ messages: unknown[]; delaySeconds?: number }>();
      for (let i = 0; i < messages.length; i += 100) await env.Q.sendBatch(messages.slice(i, i + 100).map((body) => ({ body, ...(delaySeconds ? { delaySeconds } : {}) })));
      return Response.json({ sent: messages.length }, { status: 201 });
    }
    return new Response("not found", { status: 404 });
  },

  async queue(batch: MessageBatch<unknown>): Promise<void> {
    const now = Date.now();
    consumed += batch.messages.length;
    lastAt = now;
    for (const m of batch.messages) {
      const probe = (m.body as { probe?: string } | null)?.probe;
      if (probe) started.set(probe, now);
    }
    batch.ackAll();
  },
} satisfies ExportedHandler<Env>;

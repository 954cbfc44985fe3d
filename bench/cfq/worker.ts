/**
 * The baseline for `pushDrainVsCfQueues`: Cloudflare Queues as wrangler dev
 * runs them (miniflare's queue broker, the same workerd as the queue), a
 * producer that sends what it is posted (`sendBatch`, 100 messages a call) and
 * a no-op consumer that acks batches of up to 100. `GET /stats` says how many
 * were consumed and when the last batch was. Not part of the queue.
 */

interface Env {
  Q: Queue<unknown>;
}

let consumed = 0;
let lastAt = 0;

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/v1/health") return Response.json({ ok: true });
    if (url.pathname === "/stats") return Response.json({ consumed, lastAt });
    if (req.method === "POST" && url.pathname === "/send") {
      const { messages } = await req.json<{ messages: unknown[] }>();
      for (let i = 0; i < messages.length; i += 100) await env.Q.sendBatch(messages.slice(i, i + 100).map((body) => ({ body })));
      return Response.json({ sent: messages.length }, { status: 201 });
    }
    return new Response("not found", { status: 404 });
  },

  async queue(batch: MessageBatch<unknown>): Promise<void> {
    consumed += batch.messages.length;
    lastAt = Date.now();
    batch.ackAll();
  },
} satisfies ExportedHandler<Env>;

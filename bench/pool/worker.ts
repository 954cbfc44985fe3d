/**
 * The pool ceiling benchmark: the queue's own PoolDO class, alone, driven
 * over HTTP — one acquire of `want` permits and their release per request.
 * Not part of the queue.
 */
export { PoolDO } from "../../src/pool/pool-do";
import type { PoolDO } from "../../src/pool/pool-do";

interface Env {
  POOL: DurableObjectNamespace<PoolDO>;
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const want = Number(new URL(req.url).searchParams.get("want") ?? "1");
    const pool = env.POOL.getByName("pool:bench");
    const grant = await pool.acquire({
      holder: "bench",
      type: "bench",
      want,
      cost: 1,
      rateCost: 0,
      ttlMs: 30_000,
      limits: { concurrency: 1_000_000, ratePerMinute: null },
      excludeTypes: [],
    });
    await pool.release(grant.permits);
    return Response.json({ permits: grant.permits.length });
  },
} satisfies ExportedHandler<Env>;

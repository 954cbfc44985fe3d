// BullMQ on Redis, driven the way its docs show: Queue.add / addBulk to produce, a Worker
// (its `concurrency` option) to consume. BullMQ 6 takes its Redis client from the caller
// (ioredis, one connection per Queue or Worker).
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { startTimes } from "./start-times.mjs";

export async function openBullmq(port) {
  const clients = [];
  const connection = () => {
    const c = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: null });
    clients.push(c);
    return c;
  };
  const queues = [];
  const queue = (name) => {
    const q = new Queue(name, { connection: connection() });
    queues.push(q);
    return q;
  };
  const enqueueQueue = queue("enqueue");
  const probeQueue = queue("probe");
  const starts = startTimes();
  let probeWorker = null;

  return {
    name: "BullMQ",
    enqueue: (i) => enqueueQueue.add("job", { i, to: "someone@example.com" }),
    enqueueBatch: (b, size) => enqueueQueue.addBulk(Array.from({ length: size }, (_, i) => ({ name: "job", data: { b, i, to: "someone@example.com" } }))),
    drains: {
      "Worker, concurrency 16": async (n, concurrency) => {
        const q = queue("drain");
        for (let i = 0; i < n; i += 1000) await q.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ name: "job", data: { i: i + k } })));
        let done = 0;
        let finished;
        const all = new Promise((resolve) => (finished = resolve));
        const t0 = performance.now();
        const worker = new Worker("drain", async () => ({ startedAt: Date.now() }), { connection: connection(), concurrency });
        worker.on("completed", () => ++done === n && finished());
        await all;
        const perSec = n / ((performance.now() - t0) / 1000);
        await worker.close();
        return perSec;
      },
    },
    submit: async ({ delayMs = 0 } = {}) => {
      if (!probeWorker) {
        probeWorker = new Worker("probe", async (job) => starts.started(job.id, Date.now()), { connection: connection(), concurrency: 16 });
        await probeWorker.waitUntilReady();
      }
      const job = await probeQueue.add("job", {}, delayMs ? { delay: delayMs } : {});
      return { started: () => starts.of(job.id) };
    },
    close: async () => {
      await probeWorker?.close();
      await Promise.all(queues.map((q) => q.close()));
      for (const c of clients) c.disconnect();
    },
  };
}

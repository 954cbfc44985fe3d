// pg-boss on PostgreSQL: send / insert to produce; consumed two ways — work() (its polling
// workers; 0.5 s is the shortest interval it allows) and a loop of fetch() + complete(),
// the same shape as edgequeue's pull workers.
import PgBoss from "pg-boss";
import { startTimes } from "./start-times.mjs";

const POLL_SECONDS = 0.5;

export async function openPgBoss(connection) {
  // A pool large enough for 16 concurrent loops plus pg-boss's own maintenance.
  const boss = new PgBoss({ ...connection, max: 24 });
  boss.on("error", (e) => console.error("pg-boss:", e.message));
  await boss.start();
  for (const name of ["enqueue", "probe", "drain-work", "drain-fetch"]) await boss.createQueue(name);
  const starts = startTimes();
  let probing = false;

  const prefill = async (name, n) => {
    for (let i = 0; i < n; i += 1000) await boss.insert(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ name, data: { i: i + k } })));
  };
  const completed = async (name) =>
    Number((await boss.getDb().executeSql("SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'", [name])).rows[0].n);

  return {
    name: "pg-boss",
    enqueue: (i) => boss.send("enqueue", { i, to: "someone@example.com" }),
    enqueueBatch: (b, size) => boss.insert(Array.from({ length: size }, (_, i) => ({ name: "enqueue", data: { b, i, to: "someone@example.com" } }))),
    drains: {
      [`work() ×16, batchSize 1, polling ${POLL_SECONDS} s`]: async (n, concurrency) => {
        await prefill("drain-work", n);
        const t0 = performance.now();
        for (let w = 0; w < concurrency; w++) await boss.work("drain-work", { batchSize: 1, pollingIntervalSeconds: POLL_SECONDS }, async () => ({ startedAt: Date.now() }));
        // work() completes each job after its handler returns, without waiting: count rows.
        while ((await completed("drain-work")) < n) await new Promise((r) => setTimeout(r, 50));
        const perSec = n / ((performance.now() - t0) / 1000);
        await boss.offWork("drain-work");
        return perSec;
      },
      "fetch() + complete() ×16": async (n, concurrency) => {
        await prefill("drain-fetch", n);
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            for (;;) {
              const [job] = await boss.fetch("drain-fetch");
              if (!job) return;
              await boss.complete("drain-fetch", job.id, { startedAt: Date.now() });
            }
          }),
        );
        return n / ((performance.now() - t0) / 1000);
      },
    },
    submit: async ({ delayMs = 0 } = {}) => {
      if (!probing) {
        probing = true;
        for (let w = 0; w < 16; w++) {
          await boss.work("probe", { batchSize: 1, pollingIntervalSeconds: POLL_SECONDS }, async ([job]) => starts.started(job.id, Date.now()));
        }
      }
      const id = await boss.send("probe", {}, delayMs ? { startAfter: new Date(Date.now() + delayMs) } : {});
      return { started: () => starts.of(id) };
    },
    close: () => boss.stop({ graceful: false, wait: true }),
  };
}

// What encryption at rest costs (docs/operating.md "Encryption at rest"): the same tree run twice in one run, one
// queue without EDGEQUEUE_ENCRYPTION_KEYS and one with a key, batch enqueue and push drain rounds alternated,
// medians compared (absolute rates on a shared machine drift; an alternated pair does not). Rows and requests do
// not change with sealing (test/cost runs sealed); this prices the CPU of sealing and opening each value.
//
//   node bench/sealed.mjs                    # writes bench/results/sealed.json
//
// Each side runs the shipped wrangler.toml plus the example handler in its own wrangler dev, state, free port and
// dev registry (bench/lib.mjs startWorker), from one copy of the tree taken at the start.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fill, machine, median, pushDrain, round, snapshot, startQueue } from "./lib.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = 5;
const state = mkdtempSync(path.join(os.tmpdir(), "edgequeue-sealed-"));
const KEYS = JSON.stringify([{ id: "bench", key: Buffer.alloc(32, 7).toString("base64") }]);
// A payload of some size, so sealing has bytes to work on (a small job's is ~40 bytes).
const payload = (i) => ({ i, to: "someone@example.com", note: "x".repeat(400) });

const start = (cwd, name, vars) => startQueue({ cwd, persistTo: path.join(state, name), vars });

const sides = {};
const rates = { plain: { batch: [], push: [] }, sealed: { batch: [], push: [] } };
try {
  const tree = snapshot(path.join(state, "tree"));
  sides.plain = await start(tree, "plain", {});
  sides.sealed = await start(tree, "sealed", { EDGEQUEUE_ENCRYPTION_KEYS: KEYS });
  for (const k of ["plain", "sealed"]) await fill(sides[k].url, 2000, (i) => ({ type: "sealed.warm", payload: payload(i) }), 2);
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 ? ["sealed", "plain"] : ["plain", "sealed"]) {
      rates[k].batch.push(Math.round(await fill(sides[k].url, 4000, (i) => ({ type: "sealed.batch", payload: payload(i) }), 2)));
      rates[k].push.push(Math.round(await pushDrain(sides[k].url, { type: "demo.echo", n: 3000, payloadOf: payload })));
    }
  }
} finally {
  await sides.plain?.stop();
  await sides.sealed?.stop();
  rmSync(state, { recursive: true, force: true });
}
const out = {
  date: new Date().toISOString(),
  rounds: ROUNDS,
  payloadBytes: JSON.stringify(payload(0)).length,
  batchEnqueueSealedVsPlain: round(median(rates.sealed.batch) / median(rates.plain.batch)),
  pushDrainSealedVsPlain: round(median(rates.sealed.push) / median(rates.plain.push)),
  medians: { batch: { plain: median(rates.plain.batch), sealed: median(rates.sealed.batch) }, push: { plain: median(rates.plain.push), sealed: median(rates.sealed.push) } },
  rates,
  machine: machine(),
};
writeFileSync(path.join(root, "bench/results/sealed.json"), JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));

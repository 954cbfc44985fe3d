// A/B of two versions of the queue in one run: batch enqueue and push drain, rounds alternated,
// medians compared (absolute rates on a shared machine drift; an alternated pair does not).
//
//   node bench/ab.mjs <rev>        # <rev> (a git worktree, made and removed here) against this checkout
//   AB_TYPE=demo.noop.step node bench/ab.mjs <rev>   # the push drain of another pushed type (default demo.noop)
//
// Each side runs the shipped wrangler.toml plus the example handler in its own wrangler dev, state,
// free port and dev registry (bench/lib.mjs startWorker); this checkout's side runs from a copy taken
// at the start, so edits made during the run do not reload it. Writes bench/results/ab.json.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fill, machine, median, pushDrain, round, snapshot, startQueue } from "./lib.mjs";

const rev = process.argv[2];
if (!rev) throw new Error("usage: node bench/ab.mjs <git rev to compare this checkout with>");
const root = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = 5;
const PUSH_TYPE = process.env.AB_TYPE ?? "demo.noop";
const state = mkdtempSync(path.join(os.tmpdir(), "edgequeue-ab-"));
const other = path.join(state, "worktree");
execFileSync("git", ["-C", root, "worktree", "add", "--detach", "-q", other, rev]);
symlinkSync(path.join(root, "node_modules"), path.join(other, "node_modules"));

const start = (dir, name) => startQueue({ cwd: dir, persistTo: path.join(state, name) });

const sides = {};
const rates = { a: { batch: [], push: [] }, b: { batch: [], push: [] } };
try {
  sides.a = await start(other, "a");
  sides.b = await start(snapshot(path.join(state, "tree")), "b");
  for (const k of ["a", "b"]) await fill(sides[k].url, 2000, (i) => ({ type: "ab.warm", payload: { i } }), 2);
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 ? ["b", "a"] : ["a", "b"]) {
      rates[k].batch.push(Math.round(await fill(sides[k].url, 4000, (i) => ({ type: "ab.batch", payload: { i, to: "someone@example.com" } }), 2)));
      rates[k].push.push(Math.round(await pushDrain(sides[k].url, { type: PUSH_TYPE, n: 3000 })));
    }
  }
} finally {
  await sides.a?.stop();
  await sides.b?.stop();
  execFileSync("git", ["-C", root, "worktree", "remove", "--force", other]);
  rmSync(state, { recursive: true, force: true });
}
const head = execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
const dirty = execFileSync("git", ["-C", root, "status", "--porcelain", "--", "src", "migrations"], { encoding: "utf8" }).trim() !== "";
const out = {
  date: new Date().toISOString(),
  a: rev,
  b: `${head}${dirty ? " + uncommitted changes" : ""}`,
  rounds: ROUNDS,
  pushType: PUSH_TYPE,
  batchEnqueueBvsA: round(median(rates.b.batch) / median(rates.a.batch)),
  pushDrainBvsA: round(median(rates.b.push) / median(rates.a.push)),
  medians: { batch: { a: median(rates.a.batch), b: median(rates.b.batch) }, push: { a: median(rates.a.push), b: median(rates.b.push) } },
  rates,
  machine: machine(),
};
writeFileSync(path.join(root, "bench/results/ab.json"), JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import path from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { parse } from "smol-toml";
import { configDefaults, defineConfig } from "vitest/config";

const compatibilityDate = "2026-04-20";

/** A free port for the receiver of completion callbacks and OTLP exports (test/receiver.mjs, started by the global setup). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
process.env.EDGEQUEUE_TEST_RECEIVER_PORT ??= String(await freePort());
const receiverUrl = `http://127.0.0.1:${process.env.EDGEQUEUE_TEST_RECEIVER_PORT}`;
process.env.EDGEQUEUE_TEST_RECEIVER2_PORT ??= String(await freePort());
/** A second receiver on another port: a redirect to another host (test/coordinator/callbacks.test.ts). */
const receiver2Url = `http://127.0.0.1:${process.env.EDGEQUEUE_TEST_RECEIVER2_PORT}`;

/** The config the queue ships (wrangler.toml), so the tests exercise the demo config a person runs with npm start. */
const shipped = (parse(readFileSync("./wrangler.toml", "utf8")) as { vars: { EDGEQUEUE_CONFIG: Record<string, any> } }).vars.EDGEQUEUE_CONFIG;

/**
 * The repo runs edgequeue's own entry points from the TypeScript sources: each export's "edgequeue-source"
 * condition in package.json (the built dist/ is what the package ships). `runtime` picks the handler's build:
 * workerd inside the Workers pool, the plain one in Node.
 */
function sourceAliases(runtime: "workerd" | "default") {
  const exports = JSON.parse(readFileSync("./package.json", "utf8")).exports as Record<string, { "edgequeue-source"?: string | Record<string, string> }>;
  return Object.entries(exports).flatMap(([key, entry]) => {
    const source = typeof entry === "object" ? entry["edgequeue-source"] : undefined;
    if (!source) return [];
    const file = typeof source === "string" ? source : (source[runtime] ?? source.default!);
    return [{ find: new RegExp(`^edgequeue${key.slice(1).replace(/[/.]/g, "\\$&")}$`), replacement: path.resolve(file) }];
  });
}

/** The Workers pool: the suites run inside workerd (the Workers runtime) beside the real coordinator. */
const workersPool = cloudflareTest({
  // The real coordinator: same wrangler.toml, real Durable Objects and SQLite.
  wrangler: { configPath: "./wrangler.toml" },
  miniflare: {
    // Real handler Workers over real service bindings (built by test/global-setup.mjs).
    workers: [
      // Its version metadata bound as its wrangler.toml binds it (a new id per start): attempts report it.
      { name: "edgequeue-example-handler", modules: true, scriptPath: "./.test-build/example-handler/index.js", compatibilityDate, versionMetadata: "CF_VERSION_METADATA" },
      { name: "edgequeue-test-handler", modules: true, scriptPath: "./.test-build/test-handler/index.js", compatibilityDate },
      // Cloudflare Queues in and out (test/queues/queues.test.ts): real local queues, a consumer made with
      // edgequeue/queues, and the coordinator's RPC entrypoint to enqueue through.
      {
        name: "edgequeue-test-queues",
        modules: true,
        scriptPath: "./.test-build/test-queues/index.js",
        compatibilityDate,
        // The Worker under test runs as the pool's runner, named after this project (@cloudflare/vitest-plugin getRunnerName).
        serviceBindings: { QUEUE: { name: "vitest-plugin-runner-workers", entrypoint: "EdgeQueue" } },
        queueProducers: { INBOX: { queueName: "eq-inbox" } },
        queueConsumers: { "eq-inbox": { maxBatchSize: 10, maxBatchTimeout: 0.05, maxRetries: 1, deadLetterQueue: "eq-dead", retryDelay: 0 }, "eq-dead": { maxBatchSize: 10, maxBatchTimeout: 0.05 } },
      },
    ],
    serviceBindings: {
      TEST: { name: "edgequeue-test-handler", entrypoint: "TestHandlers" },
      TEST_RAW: { name: "edgequeue-test-handler", entrypoint: "RawHandlers" },
      OBSERVER: { name: "edgequeue-test-handler", entrypoint: "Observer" },
      PROBE: { name: "edgequeue-test-handler", entrypoint: "Probe" },
      QUEUES_FIXTURE: { name: "edgequeue-test-queues" },
      // A handler Worker that is not running: nothing listens there (the unreachable-binding tests).
      DOWN: { external: { address: "127.0.0.1:9", http: {} } },
    },
    // Every transition writes an Analytics Engine point (locally the dataset drops them; the layout is tested in test/metrics).
    analyticsEngineDatasets: { ANALYTICS: { dataset: "edgequeue_test" } },
    bindings: {
      QUEUE_TOKEN: "test-token",
      // Tokens with names and roles (docs/operating.md "Tokens and roles"; test/coordinator/tokens.test.ts): each
      // token is `<name>-token`, and the secret holds its SHA-256 only.
      QUEUE_TOKENS: JSON.stringify(
        [
          { name: "ops", role: "operator" },
          { name: "shop", role: "producer" },
          { name: "mailer", role: "producer", types: ["email.send"] },
          { name: "tenant-a", role: "producer", scopeTypes: ["Tenant"] },
          { name: "pull", role: "worker" },
          { name: "renderer", role: "worker", types: ["render.video"] },
          { name: "viewer", role: "reader" },
        ].map((t) => ({ ...t, sha256: createHash("sha256").update(`${t.name}-token`).digest("hex") })),
      ),
      // Every value the suites store is sealed (docs/operating.md "Encryption at rest"; test/coordinator/sealing.test.ts):
      // "t2" seals, "t1" still opens what it sealed before a rotation.
      EDGEQUEUE_ENCRYPTION_KEYS: JSON.stringify([
        { id: "t2", key: Buffer.alloc(32, 2).toString("base64") },
        { id: "t1", key: Buffer.alloc(32, 1).toString("base64") },
      ]),
      // Completion callbacks are signed with it (docs/http-api.md "Completion callbacks"); RECEIVER_URL takes them.
      EDGEQUEUE_CALLBACK_SECRET: "test-callback-secret",
      RECEIVER_URL: receiverUrl,
      RECEIVER2_URL: receiver2Url,
      // Longer randomized runs on demand (docs/reliability.md): CHAOS_SEEDS=200 adds 200
      // seeds to each chaos suite, CHAOS_SEEDS=7,42 replays those; FUZZ_RUNS / FUZZ_SEED likewise.
      CHAOS_SEEDS: process.env.CHAOS_SEEDS ?? "",
      FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
      FUZZ_SEED: process.env.FUZZ_SEED ?? "",
      // COST_REPORT=1: test/cost prints what each workload cost as JSON (bench/cost.mjs writes bench/results/cost.json).
      COST_REPORT: process.env.COST_REPORT ?? "",
      // COST_TRACE=1 (node bench/cost.mjs --trace): each workload's rows written by statement (test/cost/harness.ts).
      COST_TRACE: process.env.COST_TRACE ?? "",
      EDGEQUEUE_CONFIG: {
        ...shipped,
        observer: "OBSERVER",
        analytics: "ANALYTICS",
        events: { log: false },
        // Data residency (test/coordinator/residency.test.ts): one scope type's objects in the EU (locally, not enforced).
        residency: { scopeTypes: { EuTenant: "eu" } },
        // Spend caps (test/coordinator/budgets.test.ts): of one type only, so no other test's type is paused.
        budgets: { "loop-attempts": { window: "hour", unit: "attempts", types: ["budget.loop"], soft: 3, hard: 5 } },
        types: {
          ...shipped.types,
          "sharded.job": { shards: 4 },
          // A pulled sensitive type (test/coordinator/sealing.test.ts).
          "pull.sensitive": { sensitive: true },
          "quick.retry": { maxAttempts: 2, backoff: { baseMs: 100, maxMs: 1000 } },
          "test.span": { binding: "TEST", batchSize: 5 },
          "test.limited": { binding: "TEST", concurrency: 3, batchSize: 2 },
          "test.long": { binding: "TEST", leaseMs: 1000 },
          "test.timeout": { binding: "TEST", timeoutMs: 1000, maxAttempts: 2, backoff: { baseMs: 10, maxMs: 10 } },
          "test.outcome": { binding: "TEST", maxAttempts: 3, backoff: { baseMs: 10, maxMs: 50 } },
          "test.deaf": { binding: "TEST", leaseMs: 1000 },
          "test.deaf.limited": { binding: "TEST", concurrency: 1 },
          "test.single.short": { binding: "TEST", concurrency: 1, leaseMs: 1000 },
          "test.serial.deaf": { binding: "TEST", serializeByScope: true, timeoutMs: 1000, maxAttempts: 1 },
          "chaos.job": { binding: "TEST", leaseMs: 1000, timeoutMs: 1500, maxAttempts: 3, backoff: { baseMs: 10, maxMs: 100 } },
          "chaos.limited": { binding: "TEST", leaseMs: 1000, timeoutMs: 1500, maxAttempts: 3, concurrency: 2, backoff: { baseMs: 10, maxMs: 100 } },
          "test.raw": { binding: "TEST_RAW", maxAttempts: 1 },
          "test.down": { binding: "DOWN", maxAttempts: 2 },
          "test.steps": { binding: "TEST", leaseMs: 1000, maxAttempts: 3, backoff: { baseMs: 10, maxMs: 50 } },
          // Code that changes under a waiting job (test/dispatch/patched.test.ts).
          "test.patch": { binding: "TEST", maxAttempts: 1 },
          // A retry loop a budget stops (test/coordinator/budgets.test.ts).
          "budget.loop": { maxAttempts: "unlimited", backoff: { kind: "fixed", baseMs: 0 } },
          // Pulled types with guards (test/scope/pull-guards.test.ts).
          "pull.limited": { concurrency: 1, maxAttempts: 1 },
          "pull.renewed": { concurrency: 1 },
          "pull.reaped": { concurrency: 1 },
          "pull.cancelled": { concurrency: 1 },
          "pull.worker.limited": { concurrency: 2 },
          "pull.rated": {},
          "pull.left": { notWhileRunning: ["pull.right"] },
          "pull.right": { notWhileRunning: ["pull.left"] },
          "pull.after": { waitsFor: ["pull.before"] },
          "pull.before": {},
          "pull.vs.push": { notWhileRunning: ["test.push.guarded"] },
          "test.push.guarded": { binding: "TEST", notWhileRunning: ["pull.vs.push"] },
          // Paused and resumed queue-wide by test/coordinator/pause.test.ts alone.
          "test.pausable": { binding: "TEST" },
          "test.log": { binding: "TEST", maxAttempts: 2, backoff: { baseMs: 10, maxMs: 10 } },
          "test.trace": { binding: "TEST" },
          // Workflows as Cloudflare's docs write them (test/workflows/cloudflare-examples.test.ts).
          "cf.hello": { binding: "TEST" },
          "cf.approval": { binding: "TEST" },
          // FIFO (test/scope/ordered.test.ts): a pulled one, and a pushed topic consumer.
          "pull.ordered": { ordered: true, maxAttempts: 2, backoff: { kind: "fixed", baseMs: 60_000 } },
          "test.ordered.consumer": { binding: "TEST", ordered: true, maxAttempts: 2, backoff: { kind: "fixed", baseMs: 10 } },
          // A waiting job holds no lease or permit (test/dispatch/waits-hold.test.ts): one at a time, and in a pool of 1.
          "test.wait.pooled": { binding: "TEST", concurrency: 1 },
          "pull.wait.pooled": { concurrency: 1 },
          // A keyed limit, pulled (test/dispatch/keyed-limits.test.ts): 2 of each tenant at once.
          "pull.tenant": { concurrency: { limit: 2, key: "payload.tenant" } },
          // Failure handlers, pulled (test/dispatch/invokes.test.ts): the handler's own onFailure is never used for it.
          "pull.onfail": { onFailure: "pull.onfail.handler", maxAttempts: 1 },
          "pull.onfail.handler": { onFailure: "pull.onfail.handler2", maxAttempts: 1 },
          "pull.onfail.handler2": {},
          // Expiry before start (test/scope/expiry.test.ts): a type's default window, pulled and pushed.
          "pull.expiring": { expireAfterMs: 1000 },
          "test.expiring": { binding: "TEST", expireAfterMs: 1000 },
          // Batch handlers (test/dispatch/batch.test.ts): pushed, pushed gathering, pulled.
          "test.batch": { binding: "TEST", batch: { maxSize: 5 }, maxAttempts: 3, backoff: { kind: "fixed", baseMs: 10 } },
          "test.batch.gather": { binding: "TEST", batch: { maxSize: 4, maxWaitMs: 1000 } },
          "pull.batch": { batch: { maxSize: 3 } },
          "pull.batch.gather": { batch: { maxSize: 3, maxWaitMs: 1000 } },
          "test.batch.keyed": { binding: "TEST", batch: { maxSize: 5, key: "payload.user" } },
          "pull.batch.keyed": { batch: { maxSize: 10, key: "payload.user" } },
          // The scenarios' types (test/scenarios/handlers.ts), pushed to the test handler; one FIFO type for a guard.
          ...Object.fromEntries(["scenario.steps", "scenario.retry", "scenario.echo", "scenario.signals", "scenario.token", "scenario.event", "scenario.parent", "scenario.sleep", "scenario.hang"].map((t) => [t, { binding: "TEST" }])),
          "scenario.ordered": { binding: "TEST", ordered: true },
        },
        pools: { ...shipped.pools, "pull-rate": { ratePerMinute: 2, types: ["pull.rated"] }, "wait-pool": { concurrency: 1, types: ["test.wait.pooled"] }, "wait-pool-pulled": { concurrency: 1, types: ["pull.wait.pooled"] } },
        topics: { ...shipped.topics, "test.ordered.topic": { consumers: ["test.ordered.consumer"] }, "scenario.paid": { consumers: [] } },
        // Few, so test/coordinator/subscriptions.test.ts reaches the bound with real sockets (the shipped default is 5,000).
        limits: { ...shipped.limits, subscribersPerObject: 20 },
        // Spans of jobs that carry a trace context go to the local receiver (test/receiver.mjs; test/coordinator/otel.test.ts).
        otel: { endpoint: receiverUrl },
      },
    },
  },
});

/**
 * A race in the Workers pool, not in the queue: each call into a Durable Object or entrypoint of the main
 * Worker (an alarm included) imports the main module through vitest's module runner, one `resolve`/`fetch`
 * RPC to the pool. An alarm a file's objects set that fires while vitest tears that file's runner down is
 * refused with this error after every test passed (vitest#8649, vitest#9458). Only that exact error is let
 * go, and it is still printed; any other unhandled error fails the run.
 */
function teardownRace(error: { name?: string; message?: string }): boolean | void {
  if (error.name === "EnvironmentTeardownError" && /Closing rpc while "(resolve|fetch)" was pending/.test(error.message ?? "")) {
    console.warn(`[vitest.config] let go: ${error.message} (an object's alarm fired during a file's teardown)`);
    return false;
  }
}

export default defineConfig({
  test: {
    onUnhandledError: teardownRace,
    projects: [
      {
        plugins: [workersPool],
        resolve: { alias: sourceAliases("workerd") },
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/browser/**", "test/node/**", "test/e2e/**"],
          globalSetup: ["./test/global-setup.mjs"],
          // A file's first test also pays for loading the Worker and its first objects (about 5 s on 2 busy cores):
          // vitest's 5 s default failed those for that alone. No test here asserts a duration.
          testTimeout: 20_000,
        },
      },
      {
        // Real-browser tests (test/browser/harness.ts): plain Node; they start `wrangler dev` the way
        // `npm start` does and drive headless Chromium (@sparticuz/chromium's, or CHROMIUM_PATH) with playwright-core. Slow by nature.
        resolve: { alias: sourceAliases("default") },
        test: {
          name: "browser",
          environment: "node",
          include: ["test/browser/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        // End to end on the local runtime `npm start` runs (wrangler 4.86's workerd, not the plugin's newer
        // one): the queue in `wrangler dev`, beside Worker projects of a user's own, restarted on its state.
        resolve: { alias: sourceAliases("default") },
        test: {
          name: "e2e",
          environment: "node",
          // Each file packs the package at the root (prepack rebuilds dist/): one file at a time.
          fileParallelism: false,
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        // Plain Node tests of what needs no Workers runtime: the OpenAPI document checked by third-party
        // tooling (swagger-parser, the Redocly CLI), which does not run inside workerd.
        resolve: { alias: sourceAliases("default") },
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
    ],
  },
});

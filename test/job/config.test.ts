import { describe, expect, it } from "vitest";
import { checkBindings, ConfigError, parseConfig } from "../../src/config/load";

describe("config", () => {
  it("fills defaults", () => {
    const c = parseConfig(undefined);
    expect(c.typeSettings("any")).toEqual({
      shards: 1,
      maxAttempts: 3,
      backoff: { kind: "exponential", baseMs: 1000, maxMs: 300_000 },
      binding: null,
      concurrency: null,
      concurrencyKeyed: false,
      rate: null,
      rateKeyed: false,
      limitKey: null,
      timeoutMs: null,
      expireAfterMs: null,
      batchSize: 100,
      batch: null,
      leaseMs: 30_000,
      serializeByScope: false,
      ordered: false,
      sensitive: false,
      maxDepth: null,
      notWhileRunning: [],
      waitsFor: [],
      onFailure: null,
      pools: [],
    });
    expect(c.pushTypes).toEqual([]);
    expect(c.sensitiveTypes).toEqual([]);
    expect(parseConfig({ types: { "pay.charge": { sensitive: true }, "pay.receipt": {} } }).sensitiveTypes).toEqual(["pay.charge"]);
    expect(() => parseConfig({ types: { t: { sensitive: "yes" } } })).toThrow(/types.t.sensitive/);
    expect(c.logEvents).toBe("operator");
    expect(c.catalogShards).toBe(4);
    expect(parseConfig({ catalog: { shards: 16 } }).catalogShards).toBe(16);
    expect(() => parseConfig({ catalog: { shards: 0 } })).toThrow(/catalog.shards/);
    // A backoff cap below its base, with the values in force.
    expect(() => parseConfig({ defaults: { backoff: { baseMs: 5000, maxMs: 1000 } } })).toThrow(/defaults.backoff.maxMs: 1000 is below baseMs 5000/);
    expect(() => parseConfig({ types: { t: { backoff: { baseMs: 600_000 } } } })).toThrow(/types.t.backoff.baseMs: maxMs 300000 is below baseMs 600000/);
    expect(() => parseConfig({ types: { t: { backoff: { baseMs: 600_000, maxMs: 600_000 } } } })).not.toThrow();
    // Retention: milliseconds, or kept until pruned (null in JSON, "forever" in TOML).
    expect(parseConfig({ retention: { failedMs: null, cancelledMs: "forever" } }).retention).toEqual({ completedMs: 86_400_000, failedMs: null, cancelledMs: null, idempotencyMs: 604_800_000, auditMs: 7_776_000_000 });
    expect(() => parseConfig({ retention: { failedMs: "never" } })).toThrow(/retention.failedMs/);
    expect(parseConfig({ events: { log: true } }).logEvents).toBe("all");
    expect(parseConfig({ events: { log: false } }).logEvents).toBe("none");
    expect(() => parseConfig({ events: { log: "some" } })).toThrow(/events.log/);
    expect(c.limits.payloadMaxBytes).toBe(131_072);
    expect(c.retention.failedMs).toBe(7 * 86_400_000);
  });

  it("merges type settings over defaults, and accepts a JSON string", () => {
    const c = parseConfig('{"defaults":{"maxAttempts":5},"types":{"email.send":{"shards":4,"backoff":{"baseMs":200}}}}');
    expect(c.typeSettings("email.send")).toMatchObject({ shards: 4, maxAttempts: 5, backoff: { baseMs: 200, maxMs: 300_000 } });
    expect(c.typeSettings("toString").shards).toBe(1);
  });

  it("refuses bad config with every problem named by path", () => {
    let message = "";
    try {
      parseConfig({ types: { "email.send": { shards: 0, maxAttempt: 3 } }, limits: { payloadMaxBytes: "big" } });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain("Invalid config in the EDGEQUEUE_CONFIG var (wrangler config `vars`, or .dev.vars)");
    expect(message).toContain('EDGEQUEUE_CONFIG.types["email.send"].shards');
    expect(message).toContain('EDGEQUEUE_CONFIG.types["email.send"]: Unrecognized key: "maxAttempt"; did you mean "maxAttempts"?');
    expect(message).toContain("EDGEQUEUE_CONFIG.limits.payloadMaxBytes");
    expect(() => parseConfig("{oops")).toThrow(/EDGEQUEUE_CONFIG is not valid JSON/);
  });

  it("budgets: what they resolve to, and the ones refused at start, each naming its field", () => {
    const c = parseConfig({ budgets: { day: { window: "day", unit: "rowsWritten", hard: 10 }, mail: { window: "hour", unit: "attempts", types: ["email.send"], soft: 1, hard: 2 } } });
    expect(c.budgets).toEqual([
      { name: "day", window: "day", unit: "rowsWritten", types: null, soft: null, hard: 10 },
      { name: "mail", window: "hour", unit: "attempts", types: ["email.send"], soft: 1, hard: 2 },
    ]);
    expect(parseConfig({}).budgets).toEqual([]);
    expect(parseConfig({ retention: { auditMs: 7_200_000 } }).retention.auditMs).toBe(7_200_000);
    expect(() => parseConfig({ budgets: { x: { window: "hour", unit: "rowsWritten", types: ["a"], hard: 1 } } })).toThrow(/budgets.x.unit: rowsWritten is counted per object/);
    expect(() => parseConfig({ budgets: { x: { window: "hour", unit: "attempts" } } })).toThrow(/budgets.x.hard: give soft, hard or both/);
    expect(() => parseConfig({ budgets: { x: { window: "hour", unit: "attempts", soft: 5, hard: 5 } } })).toThrow(/budgets.x.soft: 5 is not below hard 5/);
    expect(() => parseConfig({ budgets: { x: { window: "week", unit: "attempts", hard: 5 } } })).toThrow(/budgets.x.window/);
  });

  it("refuses a config schedule whose payload is over limits.payloadMaxBytes", () => {
    const schedules = { big: { type: "t", everyMs: 60_000, payload: { blob: "x".repeat(2_000) } } };
    expect(() => parseConfig({ limits: { payloadMaxBytes: 1024 }, schedules })).toThrow(/schedules.big.payload: 2\d{3} bytes of JSON; limits.payloadMaxBytes is 1024/);
    expect(() => parseConfig({ schedules })).not.toThrow();
  });

  it("push settings: a binding makes a type pushed; push-only options without one are refused", () => {
    const c = parseConfig({ types: { "email.send": { binding: "EMAIL", concurrency: 5, timeoutMs: 60_000, batchSize: 20, leaseMs: 10_000 } } });
    expect(c.pushTypes).toEqual(["email.send"]);
    expect(c.typeSettings("email.send")).toMatchObject({ binding: "EMAIL", concurrency: 5, timeoutMs: 60_000, batchSize: 20, leaseMs: 10_000 });
    expect(() => parseConfig({ types: { t: { batchSize: 2 } } })).toThrow(/types.t.batchSize: batchSize applies to pushed jobs: give the type a binding too/);
    // Guards hold for pulled types too: their claims take the permits.
    expect(parseConfig({ types: { t: { concurrency: 2 } } }).typeSettings("t").concurrency).toBe(2);
    expect(() => parseConfig({ types: { t: { binding: "not a name" } } })).toThrow(/types.t.binding: must be a binding name/);
  });

  it("batch and expiry settings: what they resolve to, and the settings they cannot go with", () => {
    const c = parseConfig({ types: { d: { binding: "D", batch: { maxSize: 10, maxWaitMs: 500 } }, p: { batch: { maxSize: 3 } }, e: { expireAfterMs: 60_000 } } });
    expect(c.typeSettings("d")).toMatchObject({ batchSize: 10, batch: { maxSize: 10, maxWaitMs: 500 } });
    expect(c.typeSettings("p").batch).toEqual({ maxSize: 3, maxWaitMs: 0 });
    expect(c.typeSettings("e")).toMatchObject({ batch: null, expireAfterMs: 60_000 });
    expect(() => parseConfig({ types: { d: { binding: "D", batchSize: 5, batch: { maxSize: 10 } } } })).toThrow(/types.d.batchSize: batch.maxSize sets how many jobs go in a call: leave out batchSize/);
    expect(() => parseConfig({ types: { d: { ordered: true, batch: { maxSize: 10 } } } })).toThrow(/types.d.batch: a batch runs many jobs of the type at once/);
    expect(() => parseConfig({ types: { d: { batch: { maxSize: 101 } } } })).toThrow(/types.d.batch.maxSize/);
    expect(() => parseConfig({ types: { d: { batch: { maxSize: 5, maxWait: 5 } } } })).toThrow(/types.d.batch/);
    expect(() => parseConfig({ types: { e: { expireAfterMs: 0 } } })).toThrow(/types.e.expireAfterMs/);
    // A batch's key is the type's one key: it keys the jobs as its keyed limits do.
    expect(parseConfig({ types: { k: { batch: { maxSize: 5, key: "payload.user" } } } }).typeSettings("k").limitKey).toBe("payload.user");
    expect(() => parseConfig({ types: { k: { concurrency: { limit: 2, key: "payload.t" }, batch: { maxSize: 5, key: "payload.u" } } } })).toThrow(/types.k.batch.key: "payload.u" differs from "payload.t"/);
    expect(() => parseConfig({ types: { k: { batch: { maxSize: 5, key: "user" } } } })).toThrow(/types.k.batch.key/);
  });

  it("fails at startup when a binding the config names is not in the Worker's env, naming the field", () => {
    const c = parseConfig({ observer: "OBS", types: { "email.send": { binding: "EMAIL" }, ok: { binding: "OK" } } });
    let message = "";
    try {
      checkBindings(c, { OK: { fetch() {} } });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('EDGEQUEUE_CONFIG.types["email.send"].binding: no binding named EMAIL; add a service binding to wrangler.jsonc: "services": [{ "binding": "EMAIL",');
    expect(message).toContain("EDGEQUEUE_CONFIG.observer: no binding named OBS");
    expect(message).not.toContain("types.ok");
    expect(() => checkBindings(c, { OK: {}, EMAIL: {}, OBS: {} })).not.toThrow();
  });

  it("keyed limits: one key per type, a key is a job path, a pool's rate is one kind, and what each resolves to", () => {
    expect(() => parseConfig({ types: { a: { concurrency: { limit: 2, key: "payload.t" }, rate: { limit: 5, periodMs: 1000, key: "payload.u" } } } })).toThrow(
      /types.a.rate.key: "payload.u" differs from "payload.t" \(types.a.concurrency.key\): the keyed limits of "a" must share one key/,
    );
    expect(() => parseConfig({ types: { a: {} }, pools: { p: { concurrency: 1, key: "payload.x", types: ["a"] }, q: { concurrency: 1, key: "scope.id", types: ["a"] } } })).toThrow(
      /pools.q.key: "scope.id" differs from "payload.x"/,
    );
    expect(() => parseConfig({ types: { a: { concurrency: { limit: 2, key: "tenant" } } } })).toThrow(/types.a.concurrency.key: a key is "payload.<field>"/);
    expect(() => parseConfig({ types: { a: {} }, pools: { p: { ratePerMinute: 5, rate: { limit: 5, periodMs: 1000 }, types: ["a"] } } })).toThrow(/pools.p.rate: rate and ratePerMinute/);
    expect(() => parseConfig({ types: { a: { rate: { limit: 0, periodMs: 1000 } } } })).toThrow(/types.a.rate.limit/);
    const c = parseConfig({ types: { a: { concurrency: { limit: 2, key: "payload.t" }, rate: { limit: 5, periodMs: 1000 } }, b: {} }, pools: { p: { concurrency: 3, key: "scope.id", types: ["b"] } } });
    expect(c.typeSettings("a")).toMatchObject({ concurrency: 2, concurrencyKeyed: true, rate: { limit: 5, periodMs: 1000, burst: 1 }, rateKeyed: false, limitKey: "payload.t" });
    expect(c.typeSettings("b")).toMatchObject({ concurrency: null, limitKey: "scope.id" });
    expect(c.pools.p).toMatchObject({ concurrency: 3, key: "scope.id", rate: null });
  });

  it("guards: pools need a dimension and declared members; waitsFor cycles are refused; one-sided notWhileRunning warns", () => {
    const push = (extra = {}) => ({ binding: "H", ...extra });
    expect(() => parseConfig({ types: { a: push() }, pools: { p: { types: ["a"] } } })).toThrow(/pools.p: give the pool a concurrency, a rate \(or ratePerMinute\), or both/);
    expect(() => parseConfig({ types: { a: {} }, pools: { p: { concurrency: 1, types: ["b"] } } })).toThrow(/pools.p.types\[0\]: b is not a declared type/);
    expect(() => parseConfig({ types: { a: {} }, pools: { p: { concurrency: 1, types: ["a"] } } })).not.toThrow();
    expect(() => parseConfig({ types: { a: push() }, pools: { p: { concurrency: 1, types: ["a"], costs: { b: 2 } } } })).toThrow(/pools.p.costs.b: b is not one of this pool's types/);
    expect(() =>
      parseConfig({ types: { a: push({ waitsFor: ["b"] }), b: push({ waitsFor: ["c"] }), c: push({ waitsFor: ["a"] }) } }),
    ).toThrow(/waitsFor cycle a → b → c → a/);
    expect(() => parseConfig({ types: { a: push({ notWhileRunning: ["b"] }) } })).toThrow(/notWhileRunning\[0\]: b is not a declared type/);
    expect(() => parseConfig({ types: { a: push({ notWhileRunning: ["b"] }), b: { notWhileRunning: ["a"] } } })).not.toThrow();
    expect(() => parseConfig({ types: { a: push({ notWhileRunning: ["a"] }) } })).toThrow(/notWhileRunning\[0\]: a type cannot exclude itself/);
    expect(() => parseConfig({ types: { a: push({ waitsFor: ["typo"] }) } })).toThrow(/waitsFor\[0\]: typo is not a declared type/);
    expect(() => parseConfig({ types: { a: push() }, pools: { p: { concurrency: 2, types: ["a"], costs: { a: 3 } } } })).toThrow(/pools.p.costs.a: a cost of 3 can never fit in concurrency 2/);
    const c = parseConfig({ types: { a: push({ notWhileRunning: ["b"], serializeByScope: true }), b: push() }, pools: { p: { ratePerMinute: 5, types: ["a", "b"], rateCosts: { a: 2 } } } });
    expect(c.warnings).toEqual([expect.stringContaining('types["a"].notWhileRunning names b, but b does not name a')]);
    expect(c.typeSettings("a")).toMatchObject({ serializeByScope: true, pools: ["p"], notWhileRunning: ["b"] });
    expect(c.pools.p).toMatchObject({ ratePerMinute: 5, concurrency: null, rateCosts: { a: 2 } });
  });
});

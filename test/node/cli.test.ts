/**
 * The `edgequeue` CLI in plain Node, called as a function (src/cli/index.ts
 * run): exit codes (0 ok, 1 refused, 2 usage), `check` on each kind of config
 * file with the startup checks' messages and "did you mean", and the operator
 * commands over a fetch that stands in for the queue's HTTP API (the e2e
 * project runs them against a real queue).
 */
import { parseKeys } from "../../src/sealing/keys";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { run } from "../../src/cli/index";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "edgequeue-cli-"));
  dirs.push(dir);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

async function cli(argv: string[], o: { cwd?: string; env?: Record<string, string>; fetch?: typeof fetch } = {}) {
  let out = "";
  let err = "";
  const code = await run({ argv, env: o.env ?? {}, cwd: o.cwd ?? process.cwd(), out: (s) => (out += s), err: (s) => (err += s), fetch: o.fetch });
  return { code, out, err };
}

const WRANGLER_JSONC = `{
  // comments and trailing commas, as wrangler takes them
  "name": "q",
  "durable_objects": { "bindings": [
    { "name": "SCOPE", "class_name": "ScopeDO" }, { "name": "CATALOG", "class_name": "CatalogDO" },
    { "name": "POOL", "class_name": "PoolDO" }, { "name": "SCHEDULE", "class_name": "ScheduleDO" }, { "name": "WAIT", "class_name": "WaitDO" },
  ] },
  "migrations": [{ "tag": "v1", "new_sqlite_classes": ["ScopeDO", "CatalogDO"] }, { "tag": "v2", "new_sqlite_classes": ["PoolDO", "ScheduleDO", "WaitDO"] }],
  "services": [{ "binding": "EMAILS", "service": "mailer" }],
}`;

describe("edgequeue check", () => {
  it("a wrangler.toml's [vars.EDGEQUEUE_CONFIG] with a misspelled key: exit 1, the field and the key it meant", async () => {
    const dir = folder({ "wrangler.toml": `name = "q"\n[vars.EDGEQUEUE_CONFIG.types."thumb.resize"]\nconcurreny = 10\n` });
    const r = await cli(["check"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.err).toContain("Invalid config in wrangler.toml:");
    expect(r.err).toContain('EDGEQUEUE_CONFIG.types["thumb.resize"]: Unrecognized key: "concurreny"; did you mean "concurrency"?');
  });

  it("a config module with a binding wrangler.jsonc lacks: the nearest binding it has", async () => {
    const dir = folder({
      "edgequeue.config.ts": `const config: { types: Record<string, { binding?: string }> } = { types: { "email.send": { binding: "EMAIL" } } };\nexport default config;\n`,
      "wrangler.jsonc": WRANGLER_JSONC,
      "package.json": "{}",
    });
    const r = await cli(["check"], { cwd: dir });
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain('config.types["email.send"].binding: wrangler.jsonc has no service binding named EMAIL; did you mean "EMAILS"?');
  });

  it("a good config: exit 0 and what it holds; --json for scripts", async () => {
    const dir = folder({
      "edgequeue.config.mjs": `export default { types: { "email.send": { binding: "EMAILS" }, "thumb.resize": {} }, pools: { p: { concurrency: 2, types: ["thumb.resize"] } } };\n`,
      "wrangler.jsonc": WRANGLER_JSONC,
    });
    const r = await cli(["check"], { cwd: dir });
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toBe("ok: edgequeue.config.mjs with wrangler.jsonc: 2 types, 1 pools, 0 schedules, 0 topics\n");
    expect(JSON.parse((await cli(["check", "--json"], { cwd: dir })).out)).toMatchObject({ ok: true, types: 2, pools: 1 });
  });

  it("the queue's objects and migrations missing from the wrangler config are named with the lines to add", async () => {
    const dir = folder({ "c.json": "{}", "wrangler.jsonc": `{ "name": "q" }` });
    const r = await cli(["check", "c.json"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.err).toContain('no Durable Object binding SCOPE; add { "name": "SCOPE", "class_name": "ScopeDO" } to durable_objects.bindings');
    expect(r.err).toContain('no migration creates WaitDO; add { "tag": "v4", "new_sqlite_classes": ["WaitDO"] } to migrations');
  });

  /**
   * A project as `edgequeue init` writes it (templates/init), its `edgequeue` imports pointed at this repo's
   * sources (the tsconfig paths esbuild follows), with `config` replacing the types of its edgequeue.config.ts.
   */
  function initProject(types: string, more: Record<string, string> = {}): string {
    const template = path.join(ROOT, "templates", "init");
    const files: Record<string, string> = {};
    for (const f of ["edgequeue.config.ts", "wrangler.jsonc", "src/index.ts", "src/handlers.ts", "src/jobs.ts"]) files[f] = readFileSync(path.join(template, f), "utf8").replaceAll("{{name}}", "my-queue");
    files["edgequeue.config.ts"] = files["edgequeue.config.ts"]!.replace(/types: \{[\s\S]*?\n {2}\},/, `types: ${types},`);
    const source = (f: string) => [path.join(ROOT, f)];
    files["tsconfig.json"] = JSON.stringify({ compilerOptions: { paths: { edgequeue: source("src/sdk.ts"), "edgequeue/server": source("src/server/index.ts"), "edgequeue/handler": source("src/handler/node.ts") } } });
    return folder({ ...files, ...more });
  }

  it("a type handled in the Worker (templates/init) may have batchSize and leaseMs: check reads the handlers from the main module", async () => {
    const dir = initProject(`{ "welcome.email": { batchSize: 10, leaseMs: 20_000 }, "order.fulfil": { timeoutMs: 60_000 } }`);
    expect(readFileSync(path.join(dir, "edgequeue.config.ts"), "utf8")).toContain(`"welcome.email": { batchSize: 10`);
    const r = await cli(["check", "--json"], { cwd: dir });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, types: 2, warnings: [] });
    // A topic's consumer must be pushed: a type handled in the Worker is.
    const topic = initProject(`{ "welcome.email": {} }, topics: { "user.created": { consumers: ["welcome.email"] } }`);
    expect(await cli(["check"], { cwd: topic })).toMatchObject({ code: 0, err: "" });
  });

  it("a pull-only type with batchSize is still refused, naming the field; so is a type with a handler here and a binding", async () => {
    const pulled = await cli(["check"], { cwd: initProject(`{ "welcome.email": { batchSize: 10 }, "report.build": { batchSize: 5 } }`) });
    expect(pulled.code).toBe(1);
    expect(pulled.err).toContain(`config.types["report.build"].batchSize: batchSize applies to pushed jobs: give the type a binding too, or a handler in the queue's Worker`);
    expect(pulled.err).not.toContain("welcome.email");
    const both = await cli(["check"], { cwd: initProject(`{ "welcome.email": { binding: "MAILER" } }`) });
    expect(both.code).toBe(1);
    expect(both.err).toContain(`config.types["welcome.email"].binding: the type also has a handler in this Worker (createQueue's handlers); give it one or the other`);
  });

  it("a config the Worker refuses loads its main module all the same: createQueue in Node neither throws nor logs", async () => {
    const logged = [vi.spyOn(console, "error"), vi.spyOn(console, "warn")];
    try {
      const r = await cli(["check"], { cwd: initProject(`{ "welcome.email": { concurreny: 2 }, "report.build": { batchSize: 5 } }`) });
      expect(r.code).toBe(1);
      expect(r.err).toContain(`config.types["welcome.email"]: Unrecognized key: "concurreny"; did you mean "concurrency"?`);
      // Refused for batchSize only because the main module loaded and said which types it handles (unloaded, it would be a warning).
      expect(r.err).toContain(`config.types["report.build"].batchSize: batchSize applies to pushed jobs`);
      for (const spy of logged) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of logged) spy.mockRestore();
    }
  });

  it("a main module Node cannot load: the rule that depends on its handlers is a warning saying why, the others still refuse", async () => {
    const unloadable = { "src/index.ts": `import { connect } from "cloudflare:sockets";\nexport default { fetch: () => connect("x") };\n` };
    const dir = initProject(`{ "welcome.email": { batchSize: 10 } }`, unloadable);
    const r = await cli(["check"], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^warning: src\/index\.ts could not be loaded in Node \(.*connect.*\), so the types it handles itself are unknown; the Worker refuses this unless it handles these:\n {2}- config\.types\["welcome\.email"\]\.batchSize: batchSize applies to pushed jobs/m);
    const typo = await cli(["check"], { cwd: initProject(`{ "welcome.email": { batchSize: 10, concurreny: 2 } }`, unloadable) });
    expect(typo.code).toBe(1);
    expect(typo.err).toContain(`Unrecognized key: "concurreny"`);
    expect(typo.err).not.toContain("batchSize");
  });

  it("a config in code beside an EDGEQUEUE_CONFIG var in the wrangler config: refused, as the Worker refuses two configs", async () => {
    const dir = folder({ "edgequeue.config.mjs": "export default {};\n", "wrangler.jsonc": WRANGLER_JSONC.replace(`"name": "q",`, `"name": "q", "vars": { "EDGEQUEUE_CONFIG": {} },`) });
    const r = await cli(["check"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.err).toContain("wrangler.jsonc: vars.EDGEQUEUE_CONFIG is a second config beside edgequeue.config.mjs, and the Worker takes only one: remove the var");
  });

  it("no config to be found, or a file that is not there: exit 2", async () => {
    expect((await cli(["check"], { cwd: folder({}) })).code).toBe(2);
    expect((await cli(["check", "nope.json"], { cwd: folder({}) })).err).toMatch(/no such file/);
  });
});

describe("edgequeue init", () => {
  it("refuses a folder that is not empty, and writes a new one", async () => {
    const dir = folder({ "taken/file.txt": "x" });
    const refused = await cli(["init", "taken"], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/taken is not empty \(file\.txt\)/);
    const r = await cli(["init", "My Queue", "--package", "1.2.3", "--json"], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    const written = JSON.parse(r.out) as { name: string; files: string[] };
    expect(written.name).toBe("my-queue");
    expect(written.files).toEqual([".dev.vars", ".gitignore", "README.md", "edgequeue.config.ts", "package.json", "src/handlers.ts", "src/index.ts", "src/jobs.ts", "test/handlers.test.ts", "tsconfig.json", "wrangler.jsonc"]);
  });
});

describe("the operator commands", () => {
  /** A stand-in for the API: answers each path from `answers`, recording what was asked. */
  function api(answers: Record<string, [number, unknown]>) {
    const asked: { method: string; url: string; body: unknown; auth: string | null }[] = [];
    const fetch = (async (url: string, init: RequestInit) => {
      const u = new URL(url);
      asked.push({ method: init.method!, url: u.pathname + u.search, body: init.body ? JSON.parse(String(init.body)) : undefined, auth: new Headers(init.headers).get("authorization") });
      const [status, body] = answers[`${init.method} ${u.pathname}`] ?? [404, { error: { code: "not_found", message: "no route" } }];
      return new Response(JSON.stringify(body), { status });
    }) as unknown as typeof globalThis.fetch;
    return { fetch, asked };
  }

  it("take the token from --token, EDGEQUEUE_TOKEN or ./.dev.vars; none at all is a usage error", async () => {
    const a = api({ "GET /v1/stats": [200, { pending: 0 }] });
    expect((await cli(["stats"], { cwd: folder({}), fetch: a.fetch })).code).toBe(2);
    await cli(["stats"], { cwd: folder({ ".dev.vars": "QUEUE_TOKEN=from-dev-vars\n" }), fetch: a.fetch });
    await cli(["stats"], { env: { EDGEQUEUE_TOKEN: "from-env", EDGEQUEUE_URL: "http://q.example" }, fetch: a.fetch });
    expect(a.asked.map((x) => x.auth)).toEqual(["Bearer from-dev-vars", "Bearer from-env"]);
  });

  it("enqueue sends the options as the API names them; a refusal prints its code and each field, exit 1", async () => {
    const a = api({
      "POST /v1/jobs": [400, { error: { code: "invalid_request", message: "body.priority: too big", details: [{ path: "body.priority", message: "too big" }] } }],
    });
    const r = await cli(["enqueue", "thumb.resize", '{"w":1}', "--delay", "500", "--key", "k", "--scope", "acct:42", "--priority", "999999", "--token", "t"], { fetch: a.fetch });
    expect(a.asked[0]!.body).toEqual({ type: "thumb.resize", payload: { w: 1 }, delayMs: 500, dedupeKey: "k", scope: { type: "acct", id: "42" }, priority: 999999 });
    expect(r.code).toBe(1);
    expect(r.err).toBe("error: invalid_request (HTTP 400): body.priority: too big\n  body.priority: too big\n");
    expect((await cli(["enqueue", "t", "{oops", "--token", "t"], { fetch: a.fetch })).code).toBe(2);
    expect((await cli(["enqueue", "t", "--scope", "noid", "--token", "t"], { fetch: a.fetch })).err).toMatch(/--scope noid: give it as <type>:<id>/);
  });

  it("jobs list prints a table with dates; --json the API's body; a misspelled command is a usage error", async () => {
    const job = { id: "j1", type: "t", state: "failed", attempts: 3, maxAttempts: 3, runAt: Date.UTC(2026, 11, 1, 12, 0, 0), updatedAt: Date.UTC(2026, 11, 1, 12, 0, 5), lastError: "boom" };
    const a = api({ "GET /v1/jobs": [200, { items: [job], nextCursor: null }] });
    const table = await cli(["jobs", "list", "--state", "failed", "--token", "t"], { fetch: a.fetch });
    expect(table.out.split("\n")[1]).toMatch(/^j1\s+t\s+failed\s+3\/3\s+2026-12-01 12:00:00Z\s+2026-12-01 12:00:05Z\s+boom$/);
    expect(a.asked[0]!.url).toBe("/v1/jobs?state=failed");
    expect(JSON.parse((await cli(["jobs", "list", "--json", "--token", "t"], { fetch: a.fetch })).out)).toEqual({ items: [job], nextCursor: null });
    const typo = await cli(["jobs", "lsit"]);
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(/Did you mean list\?/);
  });

  it("jobs cancel / retry with a filter: a dry run without --yes, every page with it; no id and no filter is a usage error", async () => {
    const pages = [
      { changed: 1000, skipped: 0, nextCursor: "c1" },
      { changed: 3, skipped: 1, nextCursor: null },
    ];
    let call = 0;
    const a = api({});
    const fetch = (async (url: string, init: RequestInit) => {
      await a.fetch(url, init);
      const body = JSON.parse(String(init.body));
      const answer = body.dryRun ? { changed: 1003, skipped: 0, nextCursor: null } : pages[call++];
      return new Response(JSON.stringify(answer), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const dry = await cli(["jobs", "cancel", "--type", "a,b", "--state", "pending", "--scope", "acct:42", "--created-after", "2026-12-01T00:00:00Z", "--reason", "tidy", "--token", "t"], { fetch });
    expect(dry).toMatchObject({ code: 0, out: "would cancel 1003 jobs; run it again with --yes to do it\n" });
    expect(a.asked[0]).toMatchObject({
      method: "POST",
      url: "/v1/jobs/cancel",
      body: { filter: { type: ["a", "b"], state: ["pending"], scopeType: "acct", scopeId: "42", createdAfter: Date.UTC(2026, 11, 1) }, limit: 10000, dryRun: true, reason: "tidy" },
    });
    const done = await cli(["jobs", "retry", "--failure-kind", "fatal", "--yes", "--token", "t"], { fetch });
    expect(done).toMatchObject({ code: 0, out: "retried 1003, skipped 1\n" });
    expect(a.asked.slice(1).map((x) => [x.url, x.body])).toEqual([
      ["/v1/jobs/retry", { filter: { failureKind: ["fatal"] }, limit: 1000 }],
      ["/v1/jobs/retry", { filter: { failureKind: ["fatal"] }, limit: 1000, cursor: "c1" }],
    ]);
    const bare = await cli(["jobs", "cancel", "--token", "t"], { fetch });
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/give a job id, or a filter/);
    expect((await cli(["jobs", "cancel", "--type", "a", "--created-before", "soon", "--token", "t"], { fetch })).err).toMatch(/--created-before soon: give a time/);
  });

  it("jobs rerun: one job from a step with a new payload, or every finished job of a filter; a payload that is not JSON is a usage error", async () => {
    const job = { id: "j2", type: "order.fulfil", state: "pending", rerunOf: "j1" };
    const a = api({ "POST /v1/jobs/j1/rerun": [200, { job }], "POST /v1/jobs/rerun": [200, { changed: 2, skipped: 1, nextCursor: null }] });
    const one = await cli(["jobs", "rerun", "j1", "--from", "ship", "--payload", '{"orderId":7}', "--token", "t"], { fetch: a.fetch });
    expect(one).toMatchObject({ code: 0, out: "j2  pending  (rerun of j1)\n" });
    expect(a.asked[0]).toMatchObject({ method: "POST", url: "/v1/jobs/j1/rerun", body: { fromStep: "ship", payload: { orderId: 7 } } });
    const many = await cli(["jobs", "rerun", "--type", "order.fulfil", "--state", "failed", "--from", "ship", "--yes", "--token", "t"], { fetch: a.fetch });
    expect(many).toMatchObject({ code: 0, out: "reruns made: 2, skipped 1\n" });
    expect(a.asked[1]).toMatchObject({ url: "/v1/jobs/rerun", body: { filter: { type: ["order.fulfil"], state: ["failed"] }, fromStep: "ship", limit: 1000 } });
    expect((await cli(["jobs", "rerun", "j1", "--payload", "{oops", "--token", "t"], { fetch: a.fetch })).err).toMatch(/--payload: not JSON/);
    expect((await cli(["jobs", "rerun", "--type", "t", "--payload", "{}", "--token", "t"], { fetch: a.fetch })).code).toBe(2);
  });

  it("jobs pause / resume one job: paused, or pausing at its next step; a refusal names the state, exit 1", async () => {
    const pause = { kind: "pause", name: "pause", until: null, dueAt: null };
    const a = api({
      "POST /v1/jobs/j1/pause": [200, { job: { id: "j1", state: "waiting", waitingFor: [{ ...pause, dueAt: 5 }] } }],
      "POST /v1/jobs/j2/pause": [200, { job: { id: "j2", state: "running", waitingFor: [pause] } }],
      "POST /v1/jobs/j1/resume": [200, { job: { id: "j1", state: "pending", waitingFor: null } }],
      "POST /v1/jobs/j3/resume": [409, { error: { code: "conflict", message: "cannot resume job j3: job is pending and not paused", details: { state: "pending" } } }],
    });
    expect(await cli(["jobs", "pause", "j1", "--token", "t"], { fetch: a.fetch })).toMatchObject({ code: 0, out: "j1  paused\n" });
    expect(await cli(["jobs", "pause", "j2", "--token", "t"], { fetch: a.fetch })).toMatchObject({ code: 0, out: "j2  running, pausing at its next step\n" });
    expect(await cli(["jobs", "resume", "j1", "--token", "t"], { fetch: a.fetch })).toMatchObject({ code: 0, out: "j1  pending\n" });
    const refused = await cli(["jobs", "resume", "j3", "--token", "t"], { fetch: a.fetch });
    expect([refused.code, refused.err]).toEqual([1, "error: conflict (HTTP 409): cannot resume job j3: job is pending and not paused\n"]);
    expect(a.asked.map((x) => `${x.method} ${x.url}`)).toEqual(["POST /v1/jobs/j1/pause", "POST /v1/jobs/j2/pause", "POST /v1/jobs/j1/resume", "POST /v1/jobs/j3/resume"]);
  });

  it("audit lists operator actions with their token; tokens new makes a token and its QUEUE_TOKENS entry, sending nothing", async () => {
    const entry = { id: 7, at: Date.UTC(2026, 11, 7, 9), token: "ops", role: "operator", action: "cancelJob", detail: { params: { id: "j1" } } };
    const a = api({ "GET /v1/audit": [200, { items: [entry], next: null }] });
    const listed = await cli(["audit", "--by", "ops", "--token", "t"], { fetch: a.fetch });
    expect(listed.code).toBe(0);
    expect(listed.out.split("\n")[1]).toMatch(/^2026-12-07 09:00:00Z\s+ops\s+operator\s+cancelJob\s+\{"params":\{"id":"j1"\}\}$/);
    expect(a.asked[0]!.url).toBe("/v1/audit?token=ops");
    const made = await cli(["tokens", "new", "shop", "--role", "producer", "--types", "email.send,order.new"], { fetch: a.fetch });
    expect(made.code).toBe(0);
    const token = /^  (eq_\S+)$/m.exec(made.out)![1]!;
    const json = JSON.parse(/^  (\{.*\})$/m.exec(made.out)![1]!);
    expect(json).toEqual({ name: "shop", role: "producer", sha256: createHash("sha256").update(token).digest("hex"), types: ["email.send", "order.new"] });
    expect(a.asked).toHaveLength(1);
    expect((await cli(["tokens", "new", "x", "--role", "root"])).err).toMatch(/--role: "root" is not a role; one of admin, operator, producer, worker, reader/);
  });

  it("keys new makes a 32-byte key as an EDGEQUEUE_ENCRYPTION_KEYS entry the queue accepts, sending nothing", async () => {
    const made = await cli(["keys", "new", "k2"]);
    expect(made.code).toBe(0);
    const entry = JSON.parse(/^  (\{.*\})$/m.exec(made.out)![1]!) as { id: string; key: string };
    expect(entry.id).toBe("k2");
    expect(Buffer.from(entry.key, "base64")).toHaveLength(32);
    expect(parseKeys(JSON.stringify([entry]))).toHaveLength(1);
    expect((await cli(["keys", "new", "a b"])).err).toMatch(/<id>: "a b" is not 1-32 characters/);
  });

  it("budgets lists each budget's window and state; budgets lift posts the lift", async () => {
    const b = { name: "daily", window: "day", unit: "rowsWritten", types: null, soft: 10, hard: 20, spent: 25, windowStart: 0, windowEnd: 1, softCrossedAt: 1, hardCrossedAt: 2, paused: ["a.b"], liftedAt: null };
    const a = api({ "GET /v1/budgets": [200, { items: [b] }], "POST /v1/budgets/daily/lift": [200, { budget: { ...b, paused: [], liftedAt: 3 } }] });
    const listed = await cli(["budgets", "--token", "t"], { fetch: a.fetch });
    expect(listed.out.split("\n")[1]).toMatch(/^daily\s+day\s+rowsWritten\s+\(queue\)\s+25\s+10\s+20\s+PAUSED a\.b$/);
    expect((await cli(["budgets", "lift", "daily", "--token", "t"], { fetch: a.fetch })).out).toBe("daily: lifted until its day turns\n");
    expect(a.asked[1]).toMatchObject({ method: "POST", url: "/v1/budgets/daily/lift" });
  });

  it("errors lists the groups as a table (most in the last hour first); errors retry acts on one group", async () => {
    const group = { type: "email.send", fingerprint: "0123456789abcdef", kind: "error", message: "smtp <n> refused", frame: null, sample: "smtp 550 refused", firstAt: 0, firstJobId: "j1", lastAt: Date.UTC(2026, 11, 1, 12), lastJobId: "j9", total: 12, lastHour: 3, lastDay: 12, recentJobIds: ["j1", "j9"] };
    const a = api({ "GET /v1/errors": [200, { items: [group], complete: true }], "POST /v1/errors/retry": [200, { changed: 2, skipped: 0 }] });
    const list = await cli(["errors", "--type", "email.send", "--token", "t"], { fetch: a.fetch });
    expect(list.code).toBe(0);
    expect(list.out.split("\n")[1]).toMatch(/^0123456789abcdef\s+email.send\s+error\s+3\s+12\s+12\s+2026-12-01 12:00:00Z\s+smtp <n> refused$/);
    expect(a.asked[0]!.url).toBe("/v1/errors?type=email.send");
    const retried = await cli(["errors", "retry", "email.send", "0123456789abcdef", "--token", "t"], { fetch: a.fetch });
    expect(retried).toMatchObject({ code: 0, out: "retried 2\n" });
    expect(a.asked[1]).toMatchObject({ method: "POST", url: "/v1/errors/retry", body: { type: "email.send", fingerprint: "0123456789abcdef" } });
  });

  it("pools set takes null to return to the configured limit; types pause calls the type's path", async () => {
    const a = api({
      "PUT /v1/pools/p": [200, { name: "p", limits: { concurrency: null, ratePerMinute: 5 } }],
      "POST /v1/types/a.b/pause": [200, { type: "a.b", paused: true, unreached: 0 }],
    });
    expect((await cli(["pools", "set", "p", "--concurrency", "null", "--rate", "5", "--token", "t"], { fetch: a.fetch })).out).toBe("p  concurrency -  rate/min 5\n");
    expect(a.asked[0]!.body).toEqual({ concurrency: null, ratePerMinute: 5 });
    expect((await cli(["types", "pause", "a.b", "--token", "t"], { fetch: a.fetch })).out).toBe("a.b  paused\n");
    expect((await cli(["pools", "set", "p", "--token", "t"], { fetch: a.fetch })).code).toBe(2);
  });
});

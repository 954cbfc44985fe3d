import docs from "../../docs/state-machine.md?raw";
import pkg from "../../package.json";
import { describe, expect, it } from "vitest";
import { retryDelayMs } from "../../src/job/backoff";
import { homeFor, homeOfJobId, jobIdFor, parseHome, scopeHome, shardOf, typeHome } from "../../src/job/home";
import { formatPath, jsonProblem } from "../../src/job/json-safe";
import { FAILURE_KINDS, JOB_STATES } from "../../src/job/states";
import { TRANSITIONS } from "../../src/job/transitions";
import { VERSION } from "../../src/version";

describe("homes and job ids", () => {
  it("a job id names its home, for scopes and type shards alike", () => {
    const s = scopeHome({ type: "Account", id: "a:1/é" });
    expect(homeOfJobId(jobIdFor(s.name, "x.y"))).toEqual(s);
    const t = typeHome("email.send", 3);
    expect(homeOfJobId(jobIdFor(t.name, "abc"))).toEqual(t);
  });

  it("scope names cannot collide however the parts are split", () => {
    expect(scopeHome({ type: "a:b", id: "c" }).name).not.toBe(scopeHome({ type: "a", id: "b:c" }).name);
  });

  it("an unscoped job's shard follows its dedupe key, else its id", () => {
    const a = homeFor({ type: "t", dedupeKey: "k", localId: "1" }, 8);
    const b = homeFor({ type: "t", dedupeKey: "k", localId: "2" }, 8);
    expect(a.name).toBe(b.name);
    expect(homeFor({ type: "t", localId: "z" }, 8).name).toBe(typeHome("t", shardOf("z", 8)).name);
    expect(homeFor({ type: "t", localId: "z" }, 1).name).toBe("type:t:0");
  });

  it("shards spread keys", () => {
    const counts = new Array(4).fill(0);
    for (let i = 0; i < 4000; i++) counts[shardOf(`key-${i}`, 4)]++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
  });

  it.each(["", ".", "x.", "!!.y", "Zm9v.y", "dHlwZTp0OmFi.y", "c2NvcGU6QTo.y"])("refuses %j as a job id", (id) => {
    expect(homeOfJobId(id)).toBeNull();
  });

  it("parseHome rejects malformed names", () => {
    expect(parseHome("scope:%E0%A4%A:x")).toBeNull();
    expect(parseHome("type:t:01")).toBeNull();
    expect(parseHome("other:a:b")).toBeNull();
    // Only the canonical spelling: %41 is "A", which would otherwise be a second object for scope A.
    expect(parseHome("scope:%41:b")).toBeNull();
    expect(parseHome("scope:A:b")).not.toBeNull();
  });
});

describe("JSON safety", () => {
  it("names the first problem's path", () => {
    expect(jsonProblem({ a: [1, { b: undefined }] })).toEqual({ path: ["a", 1, "b"], problem: "undefined is not JSON" });
    expect(jsonProblem({ n: Number.NaN })?.problem).toBe("NaN is not a finite number");
    expect(jsonProblem({ d: new Date() })?.problem).toBe("a Date is not a plain JSON object");
    expect(jsonProblem({ f: () => 1 })?.problem).toBe("a function is not JSON");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsonProblem(cyclic)).toEqual({ path: ["self"], problem: "circular reference" });
    expect(jsonProblem({ ok: [1, "a", null, true, { x: {} }] })).toBeNull();
    const shared = { x: 1 };
    expect(jsonProblem({ a: shared, b: shared })).toBeNull();
  });

  it("formats paths for people", () => {
    expect(formatPath(["jobs", 3, "payload", "odd key", "b"])).toBe('jobs[3].payload["odd key"].b');
  });
});

describe("backoff", () => {
  const b = { baseMs: 1000, maxMs: 10_000 };
  it("full jitter under an exponential ceiling, capped", () => {
    expect(retryDelayMs(b, 1, undefined, () => 0.999999)).toBe(1000);
    expect(retryDelayMs(b, 3, undefined, () => 0.999999)).toBe(4000);
    expect(retryDelayMs(b, 10, undefined, () => 0.999999)).toBe(10_000);
    expect(retryDelayMs(b, 3, undefined, () => 0)).toBe(0);
  });
  it("retryAfterMs is a floor", () => {
    expect(retryDelayMs(b, 1, 5000, () => 0.5)).toBe(5000);
    expect(retryDelayMs(b, 5, 100, () => 0.5)).toBe(5000);
  });
});

describe("the vocabulary and its docs", () => {
  it("docs/state-machine.md lists every state, failure kind and transition of the code", () => {
    for (const s of JOB_STATES) expect(docs).toContain(`\`${s}\``);
    for (const k of FAILURE_KINDS) expect(docs).toContain(`\`${k}\``);
    for (const [name, t] of Object.entries(TRANSITIONS)) {
      for (const from of t.from) expect(docs, `${name}: ${from} --> ${t.to}`).toContain(`${from} --> ${t.to}: ${name}`);
    }
    const arrows = docs.match(/^\s+\w+ --> \w+: \w+$/gm) ?? [];
    const expected = Object.values(TRANSITIONS).reduce((n, t) => n + t.from.length, 0);
    expect(arrows).toHaveLength(expected);
  });

  it("health reports the package version", () => {
    expect(VERSION).toBe(pkg.version);
  });
});

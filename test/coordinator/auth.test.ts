import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/coordinator/app";
import { OPERATION_LIST } from "../../src/api";
import { api } from "../helpers/api";

const concrete = (path: string) => path.replace("{id}", "x.y").replace("{scopeType}", "A").replace("{scopeId}", "1");
const guarded = OPERATION_LIST.filter((r) => r.auth).map((r) => ({ method: r.method.toUpperCase(), path: concrete(r.path) }));

describe("auth", () => {
  it.each(guarded)("$method $path refuses a missing token", async ({ method, path }) => {
    const r = await api(method, path, method === "POST" ? {} : undefined, null);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("unauthorized");
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it.each(guarded)("$method $path refuses a wrong token", async ({ method, path }) => {
    const r = await api(method, path, method === "POST" ? {} : undefined, "test-tokeN");
    expect(r.status).toBe(401);
  });

  it("fails closed when no QUEUE_TOKEN nor QUEUE_TOKENS is configured", async () => {
    const app = createApp();
    const res = await app.request("/v1/stats", { headers: { authorization: "Bearer anything" } }, { ...env, QUEUE_TOKEN: undefined, QUEUE_TOKENS: undefined });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/no QUEUE_TOKEN nor QUEUE_TOKENS configured/);
    const empty = await app.request("/v1/stats", { headers: { authorization: "Bearer " } }, { ...env, QUEUE_TOKEN: "", QUEUE_TOKENS: "" });
    expect(empty.status).toBe(401);
    // QUEUE_TOKENS alone admits its tokens, and QUEUE_TOKEN's is then no token at all.
    const named = await app.request("/v1/stats", { headers: { authorization: "Bearer viewer-token" } }, { ...env, QUEUE_TOKEN: undefined });
    expect(named.status).toBe(200);
    const old = await app.request("/v1/stats", { headers: { authorization: "Bearer test-token" } }, { ...env, QUEUE_TOKEN: undefined });
    expect(old.status).toBe(401);
  });

  it("a malformed QUEUE_TOKENS fails every call, naming the setting and field", async () => {
    const app = createApp();
    const res = await app.request("/v1/stats", { headers: { authorization: "Bearer test-token" } }, { ...env, QUEUE_TOKENS: JSON.stringify([{ name: "x", role: "superuser", sha256: "0".repeat(64) }]) });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("QUEUE_TOKENS[0].role: a role is one of admin, operator, producer, worker, reader");
  });

  it("health needs no token", async () => {
    expect((await api("GET", "/v1/health", undefined, null)).status).toBe(200);
  });
});

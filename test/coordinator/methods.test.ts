/**
 * What a request with the wrong method, or without a token, answers on the
 * API's own paths (docs/http-api.md, The HTTP API): 405 with `Allow` on a known path,
 * 404 on an unknown one, and the token checked first on every /v1 call but
 * GET /v1/health.
 */
import { describe, expect, it } from "vitest";
import { OPERATION_LIST } from "../../src/api";
import { openApiDocument } from "../../src/coordinator/openapi";
import { EdgeQueue } from "../../src/coordinator/rpc";
import { api } from "../helpers/api";

describe("a method a path does not take", () => {
  it.each([
    ["DELETE", "/v1/jobs", "GET, HEAD, POST"],
    ["PUT", "/v1/jobs/abc.def", "GET, HEAD"],
    ["GET", "/v1/claim", "POST"],
    ["PATCH", "/v1/schedules/nightly", "GET, HEAD, PUT, DELETE"],
    ["POST", "/v1/pools", "GET, HEAD"],
    ["POST", "/v1/openapi.json", "GET, HEAD"],
    ["POST", "/v1/health", "GET, HEAD"],
    // Both /v1/jobs/batch (POST) and /v1/jobs/{id} (GET, id "batch") match this path.
    ["DELETE", "/v1/jobs/batch", "GET, HEAD, POST"],
  ])("%s %s answers 405 with Allow: %s", async (method, path, allow) => {
    const r = await api(method, path, method === "GET" || method === "DELETE" ? undefined : {});
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe(allow);
    expect(r.body.error).toMatchObject({ code: "method_not_allowed", details: { method, allowed: allow.split(", ") } });
    expect(r.body.error.message).toContain(path);
  });

  it("HEAD on a path without GET is a 405 too (no body)", async () => {
    const r = await api("HEAD", "/v1/claim");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
  });

  it("unknown paths still answer 404", async () => {
    for (const [method, path] of [["GET", "/v1/nothing"], ["POST", "/v1/jobs/a.b/nothing"], ["GET", "/v1/jobs/"], ["DELETE", "/v2/jobs"]] as const) {
      const r = await api(method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe("not_found");
      expect(r.headers.get("allow")).toBeNull();
    }
  });

  it("the token is checked first: without it a wrong method on a /v1 path is a 401, even on health's path", async () => {
    for (const [method, path] of [["DELETE", "/v1/jobs"], ["POST", "/v1/health"], ["POST", "/v1/openapi.json"]] as const) {
      const r = await api(method, path, undefined, null);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.body.error.code).toBe("unauthorized");
      expect(r.headers.get("allow")).toBeNull();
    }
  });

  it("HEAD /v1/health needs no token, like GET", async () => {
    const r = await api("HEAD", "/v1/health", undefined, null);
    expect(r.status).toBe(200);
  });
});

describe("GET /v1/openapi.json", () => {
  it("answers 401 without a token, as the document says", async () => {
    const r = await api("GET", "/v1/openapi.json", undefined, null);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("unauthorized");
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const doc = (await api("GET", "/v1/openapi.json")).body;
    const op = doc.paths["/v1/openapi.json"].get;
    expect(op.operationId).toBe("getOpenApiDocument");
    expect(op.security).toBeUndefined(); // the document-wide bearer requirement applies
    expect(op.responses["401"].content["application/json"].schema.allOf[1].properties.error.properties.code.enum).toEqual(["unauthorized"]);
  });

  it("serves the document test/node/openapi.test.ts validates and lints", async () => {
    const r = await api("GET", "/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(openApiDocument(OPERATION_LIST));
  });
});

describe("operationIds", () => {
  it("are the RPC method names of the same calls, every one of them (docs/http-api.md, The HTTP API)", () => {
    const rpc = EdgeQueue.prototype as unknown as Record<string, unknown>;
    const without = OPERATION_LIST.filter((r) => typeof rpc[r.operationId] !== "function").map((r) => `${r.operationId} (${r.method.toUpperCase()} ${r.path})`);
    expect(without).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { OPERATION_LIST } from "../../src/api";
import { api } from "../helpers/api";

describe("GET /v1/openapi.json", () => {
  it("describes every declared operation, with schemas generated from zod", async () => {
    const r = await api("GET", "/v1/openapi.json");
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe("3.1.0");
    for (const op of OPERATION_LIST) expect(doc.paths[op.path]?.[op.method]?.operationId, `${op.method} ${op.path}`).toBe(op.operationId);
    const enqueue = doc.paths["/v1/jobs"].post;
    // Bodies are named schemas under components.schemas (test/node/openapi.test.ts checks the rest).
    const body = doc.components.schemas[enqueue.requestBody.content["application/json"].schema.$ref.split("/").pop()];
    expect(body.required).toEqual(["type", "payload"]);
    expect(body.properties.maxAttempts).toMatchObject({ anyOf: [{ type: "integer", minimum: 1, maximum: 1000 }, { type: "string", const: "unlimited" }] });
    expect(body.properties.payload).toEqual({ $ref: "#/components/schemas/JsonObject" });
    expect(doc.components.schemas.JsonObject.type).toBe("object");
    expect(Object.keys(enqueue.responses).sort()).toEqual(["200", "201", "400", "401", "403", "408", "409", "413", "429"]);
    // The roles that may make it (docs/operating.md "Tokens and roles").
    expect(enqueue["x-edgequeue-roles"]).toEqual(["admin", "producer"]);
    expect(doc.paths["/v1/jobs"].get.parameters.map((p: any) => p.name)).toEqual(["type", "state", "failureKind", "dedupeKey", "scopeType", "scopeId", "tag", "createdAfter", "createdBefore", "finishedAfter", "finishedBefore", "limit", "cursor"]);
    expect(doc.paths["/v1/health"].get.security).toEqual([]);
  });
});

/**
 * The OpenAPI document (docs/http-api.md, The HTTP API) as third-party tooling reads it:
 * generated here in Node from the same builder and declarations the Worker
 * serves from (test/coordinator/methods.test.ts checks the served one is this
 * one), then validated by swagger-parser and linted by the Redocly CLI with
 * the repo's redocly.yaml.
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/coordinator/openapi";
import { OPERATION_LIST } from "../../src/api";
import { ERROR_STATUS } from "../../src/errors";
import { lint, writeDocument } from "./redocly.mjs";

type Operation = {
  operationId?: string;
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: any }> }>;
};

const doc = openApiDocument(OPERATION_LIST) as {
  servers?: { url: string }[];
  info: { license?: { name: string } };
  components: { schemas: Record<string, any> };
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));
let file: string;

beforeAll(() => {
  file = writeDocument(doc);
});

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 for swagger-parser", async () => {
    // validate dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it("lints clean with Redocly's recommended rules (redocly.yaml): no error, no warning", () => {
    const { totals, problems, output } = lint(file);
    expect(
      problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(", ")}`),
      output.slice(0, 4000),
    ).toEqual([]);
    expect(totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("describes every declared operation, itself included, each with a unique camelCase operationId", () => {
    // Every declaration, and opening a subscription URL (a WebSocket or an event stream: described by hand).
    expect(operations).toHaveLength(OPERATION_LIST.length + 1);
    expect(operations.filter(({ op }) => !OPERATION_LIST.some((r) => r.operationId === op.operationId)).map(({ op }) => op.operationId)).toEqual(["openSubscription"]);
    const ids = operations.map(({ op }) => op.operationId);
    for (const [i, id] of ids.entries()) expect(id, operations[i]!.name).toMatch(/^[a-z][A-Za-z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of OPERATION_LIST) expect(doc.paths[r.path]![r.method]!.operationId).toBe(r.operationId);
    // Named like the RPC methods where there is one (docs/producers.md, Enqueue from another Worker).
    expect(doc.paths["/v1/jobs"]!.post!.operationId).toBe("enqueue");
    expect(doc.paths["/v1/jobs/{id}"]!.get!.operationId).toBe("getJob");
    expect(doc.paths["/v1/claim"]!.post!.operationId).toBe("claim");
  });

  it("names Job, Error and every request and response body under components.schemas, by $ref", () => {
    const schemas = doc.components.schemas;
    expect(schemas.Job).toMatchObject({ type: "object", properties: { id: { type: "string" }, state: { $ref: "#/components/schemas/JobState" } } });
    expect(schemas.Error).toMatchObject({ type: "object", required: ["error"] });
    expect(schemas.JobResult.properties.job).toEqual({ $ref: "#/components/schemas/Job" });
    expect(schemas.LeasedJob).toBeDefined();
    const named = (schema: { $ref?: string } | undefined, what: string) => {
      expect(schema?.$ref, what).toMatch(/^#\/components\/schemas\/\w+$/);
      expect(schemas[schema!.$ref!.split("/").pop()!], what).toBeDefined();
    };
    for (const { name, op } of operations) {
      if (op.requestBody) named(op.requestBody.content["application/json"]?.schema, `${name} request`);
      for (const [status, res] of Object.entries(op.responses)) {
        // A subscription's 101 (a WebSocket) and 200 (an event stream) carry no JSON body.
        if (Number(status) < 400 && op.operationId === "openSubscription") expect(res.content?.["application/json"]).toBeUndefined();
        else if (Number(status) < 400) named(res.content?.["application/json"]?.schema, `${name} ${status}`);
        else expect(res.content?.["application/json"]?.schema.allOf[0], `${name} ${status}`).toEqual({ $ref: "#/components/schemas/Error" });
      }
    }
    expect(doc.paths["/v1/jobs"]!.post!.requestBody!.content["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/EnqueueRequest" });
    expect(doc.paths["/v1/jobs/{id}"]!.get!.responses["200"]!.content!["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/JobResult" });
  });

  it("lists 401 and 403 and the roles on every authed operation, and the codes each error status can answer", () => {
    for (const { name, op } of operations) {
      const open = Array.isArray(op.security) && op.security.length === 0;
      if (!open) expect(Object.keys(op.responses), name).toContain("401");
      // The roles whose tokens may make it (docs/operating.md "Tokens and roles"); a refusal is a 403.
      if (!open && name !== "openSubscription") {
        expect(Object.keys(op.responses), name).toContain("403");
        expect((op as { "x-edgequeue-roles"?: string[] })["x-edgequeue-roles"]?.[0], name).toBe("admin");
      }
      for (const [status, res] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const codes: string[] = res.content!["application/json"]!.schema.allOf[1].properties.error.properties.code.enum;
        expect(codes.length, `${name} ${status}`).toBeGreaterThan(0);
        for (const code of codes) {
          expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS], `${name} ${status} ${code}`).toBe(Number(status));
          expect(res.description, `${name} ${status}`).toContain(`\`${code}\``);
        }
      }
    }
    expect(doc.paths["/v1/openapi.json"]!.get!.responses["401"]).toBeDefined();
    expect(doc.paths["/v1/health"]!.get!.security).toEqual([]);
    expect(Object.keys(doc.paths["/v1/jobs/{id}/complete"]!.post!.responses).sort()).toEqual(["200", "400", "401", "403", "404", "408", "409", "413"]);
  });

  it("has a server, and a license", () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
    expect(doc.info.license?.name).toBe("MIT");
  });
});

/**
 * The OpenAPI 3.1 document, generated from the route table and its zod
 * schemas (no hand-written copy).
 *
 * @module
 */
import { z } from "zod";
import { ERROR_STATUS } from "../errors";
import { ErrorSchema } from "../job/schemas";
import { VERSION } from "../version";
import type { Route } from "./routes";

type JsonSchema = Record<string, unknown>;

function schema(s: z.ZodType, io: "input" | "output"): JsonSchema {
  const out = z.toJSONSchema(s, {
    io,
    unrepresentable: "any",
    // Payloads and results are checked by a custom zod type (so a `__proto__` key survives); describe them as objects.
    override: (ctx) => {
      if ((ctx.zodSchema as { _zod?: { def?: { type?: string } } })._zod?.def?.type === "custom") {
        ctx.jsonSchema.type = "object";
        ctx.jsonSchema.additionalProperties = true;
      }
    },
  }) as JsonSchema;
  delete out.$schema;
  return out;
}

export function openApiDocument(routes: readonly Route[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: r.params?.shape[m[1]!] ? schema(r.params.shape[m[1]!] as z.ZodType, "input") : { type: "string" },
    }));
    const query = r.query
      ? Object.entries(r.query.shape).map(([name, s]) => ({
          name,
          in: "query",
          required: !(s as z.ZodType).safeParse(undefined).success,
          schema: schema(s as z.ZodType, "input"),
        }))
      : [];
    const responses: Record<string, unknown> = {};
    for (const [status, s] of Object.entries(r.responses)) {
      const description = status === "201" ? "Created" : status === "202" ? "Accepted" : "OK";
      const content: Record<string, unknown> = { "application/json": { schema: schema(s, "output") } };
      if (status === "200" && r.alsoAs) content[r.alsoAs.contentType] = { schema: { type: "string", description: r.alsoAs.description } };
      responses[status] = { description, content };
    }
    for (const code of r.errors) {
      const status = String(ERROR_STATUS[code]);
      const existing = responses[status] as { description: string } | undefined;
      responses[status] = {
        description: existing ? `${existing.description}, ${code}` : code,
        content: { "application/json": { schema: schema(ErrorSchema, "output") } },
      };
    }
    paths[r.path] ??= {};
    paths[r.path]![r.method] = {
      summary: r.summary,
      ...(r.auth ? {} : { security: [] }),
      parameters: [...params, ...query],
      ...(r.body ? { requestBody: { required: true, content: { "application/json": { schema: schema(r.body, "input") } } } } : {}),
      responses,
    };
  }
  paths["/v1/openapi.json"] = { get: { summary: "This document", responses: { 200: { description: "OpenAPI 3.1" } } } };
  return {
    openapi: "3.1.0",
    info: { title: "edgequeue", version: VERSION, description: "A durable job queue on Cloudflare Durable Objects." },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}

/**
 * The HTTP client reaches every operation the coordinator serves: its
 * operation table (client/operations.ts) holds each route's operationId,
 * method and path, and nothing else.
 */
import { describe, expect, it } from "vitest";
import { OPERATIONS, operationUrl } from "../../src/client/operations";
import { ROUTES } from "../../src/coordinator/routes";

describe("the HTTP client's operations", () => {
  it("are the routes the coordinator serves, by operationId, method and path", () => {
    const served = Object.fromEntries(ROUTES.map((r) => [r.operationId, [r.method.toUpperCase(), r.path]]));
    expect(OPERATIONS).toEqual(served);
  });

  it("fill path parameters encoded, and a query with lists as commas", () => {
    expect(operationUrl("resolveStep", { params: { id: "a/b", name: "s 1" } })).toBe("/v1/jobs/a%2Fb/steps/s%201/resolve");
    expect(operationUrl("listJobs", { query: { type: ["a", "b"], limit: 5, cursor: undefined } })).toBe("/v1/jobs?type=a%2Cb&limit=5");
    expect(() => operationUrl("getJob")).toThrow(/getJob: the path parameter id is missing/);
  });
});

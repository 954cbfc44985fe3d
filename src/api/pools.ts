/**
 * Pools: every pool's limits, occupancy and waiting line, and resizing one at runtime
 * (docs/guards.md). The rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import type { z } from "zod";
import { PoolKeysQuerySchema, PoolKeysSchema, PoolLimitsSchema, PoolListSchema, PoolNameParams, PoolStatusSchema } from "../job/schemas/pools";
import { operation } from "./operation";

export const POOL_OPERATIONS = {
  listPools: operation({
    access: "read",
    method: "get",
    path: "/v1/pools",
    summary: "Every pool: limits in force, occupancy, spend in the current window, who is waiting",
    response: PoolListSchema,
    errors: [],
  }),
  listPoolKeys: operation({
    access: "read",
    method: "get",
    path: "/v1/pools/{name}/keys",
    summary: "A keyed pool's key values holding permits or waited for, busiest first, a page at a time",
    params: PoolNameParams,
    query: PoolKeysQuerySchema,
    response: PoolKeysSchema,
    errors: ["not_found"],
  }),
  setPoolLimits: operation({
    access: "operate",
    method: "put",
    path: "/v1/pools/{name}",
    summary: "Resize a pool at runtime (persisted; the config stays the default); with `key`, one key value of a keyed pool",
    params: PoolNameParams,
    body: PoolLimitsSchema,
    response: PoolStatusSchema,
    errors: ["not_found"],
    // The limits are not optional, though each field is: a call gives at least one (the schema's refinement).
    rpc: { input: (name: string, limits: z.input<typeof PoolLimitsSchema>) => ({ params: { name }, body: limits }) },
  }),
};

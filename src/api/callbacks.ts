/**
 * Completion callbacks (docs/http-api.md "Completion callbacks"): the ones that died after their last try. The
 * rule and fields of a declaration: api/operation.ts.
 *
 * @module
 */
import { DeadCallbacksQuerySchema, DeadCallbacksSchema } from "../job/schemas/callbacks";
import { operation } from "./operation";

export const CALLBACK_OPERATIONS = {
  deadCallbacks: operation({
    access: "read",
    method: "get",
    path: "/v1/callbacks/dead",
    summary: "Completion callbacks given up on after their last try, oldest first per object (kept until their job is deleted)",
    query: DeadCallbacksQuerySchema,
    response: DeadCallbacksSchema,
    errors: [],
  }),
};

/**
 * Signals and wait tokens: what ends a job's wait (docs/workflows.md) — a signal to a job by id or to the live job
 * holding a key, a wait token's completion (the one call that needs no queue token: the token itself is the
 * credential), and a pull worker's attempt ending on its waits. The rule and fields of a declaration:
 * api/operation.ts.
 *
 * @module
 */
import { JobResultSchema } from "../job/schemas/job";
import { KeySignalSchema, SignalBodySchema, SignalParams, SignalResultSchema, TokenBodySchema, TokenParams, TokenResultSchema, WaitSchema } from "../job/schemas/journal";
import { JobIdParams } from "../job/schemas/pieces";
import { operation } from "./operation";

export const SIGNAL_OPERATIONS = {
  signalJob: operation({
    access: "signal",
    method: "post",
    path: "/v1/jobs/{id}/signals/{name}",
    summary: "Send a signal to a job: it ends the job's wait for a signal of this name, or is kept for the wait to come (signals.retainMs)",
    params: SignalParams,
    body: SignalBodySchema,
    response: SignalResultSchema,
    status: 202,
    errors: ["not_found", "already_terminal", "conflict", "payload_too_large"],
  }),
  signalKey: operation({
    access: "signal",
    method: "post",
    path: "/v1/signals",
    summary: "Send a signal to the live job of a type that holds a dedupe key (a waiting one first, then a running one, then a pending one)",
    body: KeySignalSchema,
    response: SignalResultSchema,
    status: 202,
    errors: ["not_found", "conflict", "payload_too_large"],
  }),
  completeWaitToken: operation({
    method: "post",
    path: "/v1/tokens/{token}",
    summary: "Complete a wait token (no queue token: the token is the credential); once only, and not after it expires",
    params: TokenParams,
    body: TokenBodySchema,
    response: TokenResultSchema,
    status: 202,
    auth: false,
    errors: ["not_found", "already_terminal", "conflict", "gone", "payload_too_large"],
  }),
  waitJob: operation({
    access: "work",
    method: "post",
    path: "/v1/jobs/{id}/wait",
    summary: "A pull worker's attempt ends on waits (ctx.waitForSignal, waitForToken, waitForEvent, invoke): journaled, the children owed, and the job waiting — or due again at once when one has ended — without spending the attempt",
    params: JobIdParams,
    body: WaitSchema,
    response: JobResultSchema,
    errors: ["not_found", "lease_lost", "already_terminal", "conflict"],
  }),
};

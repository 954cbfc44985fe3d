/**
 * Every operation of the API, by operationId — the stable public name of the call: the RPC method's
 * name, the OpenAPI operationId and the clients' method (generated clients name their calls by it, so
 * renaming one breaks them). Each area's declarations are in their own module; the routes, the RPC
 * entrypoint, the OpenAPI document and the clients are derived from this record
 * (docs/design.md "Operations, declared once").
 *
 * @module
 */
import { BULK_OPERATIONS } from "./bulk";
import { JOB_OPERATIONS } from "./jobs";
import { JOURNAL_OPERATIONS } from "./journal";
import { LEASE_OPERATIONS } from "./leases";
import type { AnswerOf, ArgsOf, ClientMethodOf, Operation, ParsedInputOf } from "./operation";
import { POOL_OPERATIONS } from "./pools";
import { QUEUE_OPERATIONS } from "./queue";
import { SCHEDULE_OPERATIONS } from "./schedules";
import { SIGNAL_OPERATIONS } from "./signals";
import { SUBSCRIPTION_OPERATIONS } from "./subscriptions";
import { CALLBACK_OPERATIONS } from "./callbacks";
import { TOPIC_OPERATIONS } from "./topics";
import { ERROR_OPERATIONS } from "./errors";
import { AUDIT_OPERATIONS } from "./audit";
import { BUDGET_OPERATIONS } from "./budgets";

const AREAS = [JOB_OPERATIONS, BULK_OPERATIONS, LEASE_OPERATIONS, JOURNAL_OPERATIONS, SIGNAL_OPERATIONS, QUEUE_OPERATIONS, TOPIC_OPERATIONS, SCHEDULE_OPERATIONS, POOL_OPERATIONS, SUBSCRIPTION_OPERATIONS, CALLBACK_OPERATIONS, ERROR_OPERATIONS, AUDIT_OPERATIONS, BUDGET_OPERATIONS];

export const OPERATIONS = {
  ...JOB_OPERATIONS,
  ...BULK_OPERATIONS,
  ...LEASE_OPERATIONS,
  ...JOURNAL_OPERATIONS,
  ...SIGNAL_OPERATIONS,
  ...QUEUE_OPERATIONS,
  ...TOPIC_OPERATIONS,
  ...SCHEDULE_OPERATIONS,
  ...POOL_OPERATIONS,
  ...SUBSCRIPTION_OPERATIONS,
  ...CALLBACK_OPERATIONS,
  ...ERROR_OPERATIONS,
  ...AUDIT_OPERATIONS,
  ...BUDGET_OPERATIONS,
};
// A spread keeps one of two same-named declarations without a word: refuse that at load.
if (AREAS.reduce((n, a) => n + Object.keys(a).length, 0) !== Object.keys(OPERATIONS).length) throw new Error("an operationId is declared in two areas of src/api/");

export type Operations = typeof OPERATIONS;
export type OperationId = keyof Operations;

/** A declaration with its operationId. */
export type DeclaredOperation = Operation & { operationId: OperationId };

/** Every declaration, in declaration order (the order of the OpenAPI document's paths). */
export const OPERATION_LIST: readonly DeclaredOperation[] = Object.entries(OPERATIONS).map(([operationId, op]) => ({ ...(op as Operation), operationId: operationId as OperationId }));
// Every call that needs a token says which kind of call it is: a role is checked against it (auth/roles.ts).
const unsaid = OPERATION_LIST.filter((o) => o.auth && o.access === undefined).map((o) => o.operationId);
if (unsaid.length > 0) throw new Error(`operations without an access kind (src/api/, auth/roles.ts): ${unsaid.join(", ")}`);

export const operationById = (id: OperationId): DeclaredOperation => OPERATION_LIST.find((o) => o.operationId === id)!;

/** An operation's RPC arguments, answer, parsed input and client method, by operationId. */
export type Args<K extends OperationId> = ArgsOf<Operations[K]>;
export type Answer<K extends OperationId> = AnswerOf<Operations[K]>;
export type ParsedInput<K extends OperationId> = ParsedInputOf<Operations[K]>;
export type ClientMethod<K extends OperationId> = ClientMethodOf<Operations[K]>;

export type { OperationInput } from "./operation";
export { inputOf, operationUrl } from "./call-input";

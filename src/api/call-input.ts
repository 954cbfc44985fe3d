/**
 * From an operation's RPC arguments to its HTTP input, and from that to its URL — the one mapping the
 * RPC entrypoint, the RPC client and the HTTP client all use (the rule is in api/operation.ts).
 *
 * @module
 */
import type { z } from "zod";
import type { Operation, OperationInput } from "./operation";

/** The parameter names of a path template, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/** A body schema without fields: sent as `{}`, no RPC argument. */
export function hasNoFields(schema: z.ZodType): boolean {
  const shape = (schema as { shape?: unknown }).shape;
  return typeof shape === "object" && shape !== null && Object.keys(shape).length === 0;
}

/**
 * inputOf: the HTTP input an RPC argument list stands for. A body or query left out is `{}` (as an
 * empty HTTP body reads, coordinator/body.ts), so a left-out input is refused field by field.
 */
export function inputOf(op: Operation, args: readonly unknown[]): OperationInput {
  if (op.rpc) return op.rpc.input(...args);
  const names = pathParamNames(op.path);
  const params = Object.fromEntries(names.map((n, i) => [n, args[i]]));
  const rest = args[names.length] ?? {};
  if (op.body) return { params, body: hasNoFields(op.body) ? {} : rest };
  if (op.query) return { params, query: rest as Record<string, unknown> };
  return { params };
}

/** operationUrl: the path with its parameters filled in (each encoded) and the query appended; a missing parameter throws. */
export function operationUrl(operationId: string, op: Pick<Operation, "path">, input: OperationInput = {}): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = input.params?.[name];
    if (v === undefined) throw new TypeError(`${operationId}: the path parameter ${name} is missing`);
    return encodeURIComponent(String(v));
  });
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(input.query ?? {})) {
    if (v === undefined) continue;
    // The API takes a list as comma-separated text.
    params.set(k, Array.isArray(v) ? v.join(",") : String(v));
  }
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

/**
 * Turning zod's verdict into the API's `invalid_request` error, with one
 * `{path, message}` per problem so a caller can fix every field at once.
 *
 * @module
 */
import type { z } from "zod";
import { QueueError } from "../errors";
import { formatPath } from "../job/json-safe";

export interface FieldProblem {
  path: string;
  message: string;
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const details: FieldProblem[] = parsed.error.issues.flatMap((i) =>
    // zod reports unknown keys once, at their parent; name each one, so a typo points at itself.
    i.code === "unrecognized_keys"
      ? i.keys.map((k) => ({ path: formatPath([...i.path, k]), message: "unknown field" }))
      : [{ path: formatPath(i.path) || what, message: i.message }],
  );
  const first = details[0]!;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
  throw new QueueError("invalid_request", `${first.path}: ${first.message}${more}`, details);
}

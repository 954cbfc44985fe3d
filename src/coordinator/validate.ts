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

/** parseInput: `input` as `schema` reads it, or a 400 naming each problem; `names` renames a top-level field in those names (an RPC argument's own). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string, names?: Readonly<Record<string, string>>): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const at = (path: PropertyKey[]) => {
    const top = path[0];
    return formatPath(names && typeof top === "string" && Object.hasOwn(names, top) ? [names[top]!, ...path.slice(1)] : path);
  };
  const details: FieldProblem[] = parsed.error.issues.flatMap((i) =>
    // zod reports unknown keys once, at their parent; name each one, so a typo points at itself.
    i.code === "unrecognized_keys"
      ? i.keys.map((k) => ({ path: at([...i.path, k]), message: "unknown field" }))
      : [{ path: at(i.path) || what, message: i.message }],
  );
  const first = details[0]!;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
  throw new QueueError("invalid_request", `${first.path}: ${first.message}${more}`, details);
}

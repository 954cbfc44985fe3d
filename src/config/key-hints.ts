/**
 * "Did you mean" for a misspelled config key: the keys the schema knows at
 * the same place, nearest first (`concurreny` → `concurrency`).
 *
 * @module
 */
import type { z } from "zod";
import { didYouMean, nearestTypes } from "./known-types";
import { ConfigSchema } from "./schema";

type Def = { type: string; shape?: Record<string, z.ZodType>; valueType?: z.ZodType; innerType?: z.ZodType; options?: z.ZodType[] };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** objectAt: the object schema a config path leads to (through records, optionals and unions), or null. */
function objectAt(schema: z.ZodType, path: readonly PropertyKey[]): Record<string, z.ZodType> | null {
  let s: z.ZodType | undefined = schema;
  const rest = [...path];
  while (s) {
    const d = defOf(s);
    if (d.type === "optional" || d.type === "nullable" || d.type === "default") s = d.innerType;
    else if (d.type === "union") s = d.options?.find((o) => defOf(o).type === "object" || defOf(o).type === "record");
    else if (rest.length === 0) return d.type === "object" ? (d.shape ?? null) : null;
    else if (d.type === "object") s = d.shape?.[String(rest.shift())];
    else if (d.type === "record") {
      rest.shift();
      s = d.valueType;
    } else return null;
  }
  return null;
}

/** unknownKeyHint: `; did you mean "concurrency"?`, or `; known keys here: a, b, c`, or "" when the path is not an object. */
export function unknownKeyHint(path: readonly PropertyKey[], keys: readonly string[]): string {
  const shape = objectAt(ConfigSchema, path);
  if (!shape) return "";
  const known = Object.keys(shape);
  return didYouMean(keys.flatMap((k) => nearestTypes(k, known, 1))) || `; known keys here: ${known.join(", ")}`;
}

/**
 * The one rule every name that enters the queue keeps besides its length:
 * well-formed Unicode, that is no lone UTF-16 surrogate (docs/http-api.md
 * "Semantics worth knowing", Names). Job types, scope types and ids, dedupe
 * keys, tags, worker, topic, pool and step names become SQLite text or part of
 * an object's name, and neither can hold a lone surrogate: SQLite stores UTF-8
 * and turns one into U+FFFD (a schedule kept a type that matched nothing), and
 * an object's name is built with encodeURIComponent, which throws (a 500). So
 * such a name is refused where it is parsed, before anything is written; the
 * caller's path names the field.
 *
 * @module
 */
import type { z } from "zod";

/** With the `u` flag a surrogate pair is one code point, so only a lone surrogate is a `Cs` character. */
const LONE_SURROGATE = /\p{Cs}/u;

/** loneSurrogateAt: the index of the first lone surrogate in `text`, or -1 when it is well-formed (String.prototype.isWellFormed). */
export function loneSurrogateAt(text: string): number {
  return text.search(LONE_SURROGATE);
}

/** wellFormed: `schema`, also refusing a string that is not well-formed Unicode; the caller's path names the field. */
export function wellFormed<S extends z.ZodString>(schema: S): S {
  return schema.superRefine((value, ctx) => {
    const at = loneSurrogateAt(value);
    if (at < 0) return;
    const unit = value.charCodeAt(at).toString(16).toUpperCase();
    ctx.addIssue({ code: "custom", message: `must be well-formed Unicode: a lone surrogate (\\u${unit}) at character ${at}` });
  });
}

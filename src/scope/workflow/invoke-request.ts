/**
 * An invoke's request, checked as `POST /v1/jobs` checks an enqueue (docs/workflows.md "Child jobs"), the fields
 * but the payload once per distinct shape of a wait's requests: a fan-out's requests mostly differ in the payload
 * alone, and the schema's parse was most of a 1,000-child wait's time (docs/design.md "Child jobs and failure
 * handlers"). A refusal names the first field wrong, as the whole request's parse does.
 *
 * @module
 */
import { EnqueueSchema, type EnqueueRequest } from "../../job/schemas";
import { JsonObjectSchema } from "../../job/schemas/pieces";

/** The checked fields of a wait's invoke requests but their payloads, by their shape key; null: that shape is refused. */
export type RequestShapes = Map<string, Omit<EnqueueRequest, "payload"> | null>;

/** checkRequest: an invoke's request as an enqueue takes it — its shape from `shapes` when seen, its payload each time. */
export function checkRequest(request: unknown, shapes: RequestShapes): { ok: true; request: EnqueueRequest } | { ok: false; path: PropertyKey[]; message: string } {
  const refusal = () => {
    const issue = EnqueueSchema.safeParse(request).error?.issues[0];
    return { ok: false as const, path: issue?.path ?? [], message: issue?.message ?? "is not an enqueue request" };
  };
  if (typeof request !== "object" || request === null || Array.isArray(request)) return refusal();
  const { payload, ...rest } = request as Record<string, unknown>;
  const key = shapeKey(rest);
  if (key === null) return refusal();
  let shape = shapes.get(key);
  if (shape === undefined) {
    const parsed = EnqueueSchema.safeParse({ ...rest, payload: {} });
    shape = parsed.success ? (({ payload: _, ...fields }) => fields)(parsed.data) : null;
    shapes.set(key, shape);
  }
  // A refused shape, or a payload that is no JSON object: the whole request is parsed again, so the refusal names
  // the first field wrong as it always did.
  if (shape === null || !JsonObjectSchema.safeParse(payload).success) return refusal();
  return { ok: true, request: { ...shape, payload: payload as EnqueueRequest["payload"] } };
}

/**
 * shapeKey: text that tells two requests' fields apart exactly as the schema would — every value tagged with its
 * kind, so a number is never a string, NaN never null, a key set to undefined never an absent one (a strict schema
 * refuses an unknown key even so). A value of another kind (a function, a BigInt, a Date, a Map) gives no key, and
 * the request is parsed whole.
 */
function shapeKey(fields: Record<string, unknown>): string | null {
  try {
    return encode(fields);
  } catch (e) {
    if (e === NO_KEY) return null;
    throw e;
  }
}
const NO_KEY = Symbol("no key");

function encode(v: unknown): string {
  if (v === null) return "z";
  switch (typeof v) {
    case "undefined":
      return "u";
    case "boolean":
      return v ? "t" : "f";
    case "number":
      return `n${String(v)}`;
    case "string":
      return `s${JSON.stringify(v)}`;
    case "object": {
      if (Array.isArray(v)) return `[${Array.from(v, encode).join(",")}]`;
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw NO_KEY;
      return `{${Object.keys(v).map((k) => `${JSON.stringify(k)}:${encode((v as Record<string, unknown>)[k])}`).join(",")}}`;
    }
    default:
      throw NO_KEY;
  }
}


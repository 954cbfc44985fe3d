/**
 * Error groups (docs/operating.md "Error groups"): an attempt's error reduced to a fingerprint — its kind, its
 * message with what varies from job to job masked (ids, numbers, times, quoted values), and the first frame of its
 * stack when the handler's runtime sent one — so a thousand "order 8812 not found" are one group, counted per type.
 * Words are kept (a property's or a field's name tells one bug from another), their digits masked.
 * Trigger.dev's and Cloudflare's error groups, by the same idea.
 *
 * @module
 */
import { hash64 } from "./hash";

/**
 * What kind of failure an attempt's end was: `error` (a thrown error, retried or its retries spent), `fatal` (a
 * TerminalJobError, or the queue's refusal of a step), `timeout` (past its timeoutMs), `stalled` (its lease lapsed:
 * the handler or its object went away).
 */
export type ErrorKind = "error" | "fatal" | "timeout" | "stalled" | "nondeterminism";

/** The longest message a group keeps, masked (the first job's whole error is in its view). */
export const GROUP_MESSAGE_MAX = 300;

const MASKS: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<id>"],
  [/\b\d{4}-\d{2}-\d{2}[T ][\d:.]+Z?\b/g, "<time>"],
  [/[^\s@"'<>()]+@[^\s@"'<>()]+\.[A-Za-z]{2,}/g, "<email>"],
  // A run of hex or base64url with a digit in it, 8 or longer: an id, a token, a hash.
  [/\b(?=[A-Za-z0-9_~.-]*\d)[A-Za-z0-9_~-]{8,}(?:\.[A-Za-z0-9_~-]+)*\b/g, "<id>"],
  [/\d+(?:\.\d+)?/g, "<n>"],
];

/** masked: the message's first line with what varies between jobs replaced (ids, times, emails, numbers), cut to GROUP_MESSAGE_MAX. */
export function masked(message: string): string {
  let out = message.split("\n", 1)[0]!.trim();
  for (const [re, by] of MASKS) out = out.replace(re, by);
  return out.slice(0, GROUP_MESSAGE_MAX);
}

/**
 * firstFrame: the first `at …` line of a stack, with its file's name alone — not its line and column, which move with
 * every edit above it, nor its folder, which a bundler's build or `wrangler dev`'s temporary folder changes.
 */
export function firstFrame(stack: string | undefined | null): string | null {
  const line = stack?.split("\n").find((l) => /^\s+at\s/.test(l));
  if (!line) return null;
  const frame = line.trim().replace(/:\d+:\d+(\)?)$/, "$1");
  return frame.replace(/\(([^()]*[/\\])?([^/\\()]+)\)$/, "($2)").slice(0, 200);
}

/** fingerprint: the group an error falls in, within its type: 16 hex characters of its kind, masked message and frame. */
export function fingerprint(kind: ErrorKind, message: string, frame: string | null): string {
  return hash64(`${kind}\n${masked(message)}\n${frame ?? ""}`);
}

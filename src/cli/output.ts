/**
 * How the CLI speaks: JSON for scripts (`--json`), tables and dates for
 * people, errors with their code and field, and exit codes a script can test
 * (docs/operating.md "The operator CLI"): 0 ok, 1 refused, 2 usage.
 *
 * @module
 */
import { QueueClientError } from "../client/errors";

export const EXIT = { ok: 0, refused: 1, usage: 2 } as const;

/** A usage problem: the command line itself is wrong (exit 2). */
export class UsageError extends Error {}
/** A refusal the CLI finds itself (a check that failed): exit 1. */
export class Refused extends Error {}

/** when: an epoch-ms time as a date a person reads (UTC, to the second); "-" for none. */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** table: rows under a header, columns padded to their widest cell. */
export function table(header: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? "-" : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}

/** fail: say what went wrong on stderr, with the API's code, status and each field problem; return the exit code. */
export function explain(e: unknown, write: (s: string) => void): number {
  if (e instanceof UsageError) {
    write(`error: ${e.message}\n`);
    return EXIT.usage;
  }
  if (e instanceof Refused) {
    write(`${e.message}\n`);
    return EXIT.refused;
  }
  if (e instanceof QueueClientError) {
    write(`error: ${e.code}${e.status ? ` (HTTP ${e.status})` : ""}: ${e.message}\n`);
    if (Array.isArray(e.details)) for (const d of e.details as { path?: string; message?: string }[]) if (d?.path) write(`  ${d.path}: ${d.message}\n`);
    return EXIT.refused;
  }
  const cause = (e as { cause?: { code?: string } })?.cause?.code;
  if (cause === "ECONNREFUSED" || cause === "ENOTFOUND") {
    write(`error: could not reach the queue (${cause}): ${(e as Error).message}. Is it running? Set --url or EDGEQUEUE_URL.\n`);
    return EXIT.refused;
  }
  write(`error: ${(e as Error)?.message ?? String(e)}\n`);
  return EXIT.refused;
}

/** scopeOf: `--scope type:id`. */
export function scopeOf(s: string | undefined): { type: string; id: string } | undefined {
  if (s === undefined) return undefined;
  const i = s.indexOf(":");
  if (i <= 0 || i === s.length - 1) throw new UsageError(`--scope ${s}: give it as <type>:<id>, e.g. --scope account:42`);
  return { type: s.slice(0, i), id: s.slice(i + 1) };
}

/** int: a whole-number option's parser, naming the option when it is not one. */
export function int(name: string) {
  return (v: string) => {
    if (!/^-?\d+$/.test(v)) throw new UsageError(`${name} ${v}: a whole number is needed`);
    return Number(v);
  };
}

/** jsonObject: a payload given on the command line, parsed — or a usage error naming where it was given. */
export function jsonObject(where: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${where}: not JSON (${(e as Error).message}); give an object, e.g. '{"to":"a@b.c"}'`);
  }
}

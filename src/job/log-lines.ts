/**
 * `ctx.log` lines kept with the job (docs/handlers.md "Logs kept with the job"): the
 * newest LOG_LINES_PER_JOB of a job, each clipped to LOG_LINE_MAX_BYTES of
 * UTF-8 (message plus its fields as JSON), deleted with the job. One shape for
 * the handler SDK that writes them, the binding and HTTP calls that carry
 * them, and the scope object that stores them.
 *
 * @module
 */
import { isJsonObject, type JsonObject } from "./json-safe";

export const LOG_LINES_PER_JOB = 100;
export const LOG_LINE_MAX_BYTES = 2048;

export interface JobLogLine {
  /** Epoch ms, by the handler's clock. */
  at: number;
  attempt: number;
  message: string;
  fields: JsonObject | null;
}

const encoder = new TextEncoder();
const bytes = (s: string) => encoder.encode(s).length;

/**
 * logLine: a line as `ctx.log` was given it, made storable. Fields that JSON cannot carry become
 * `{"unserializable": "<why>"}`; fields that do not fit the line's budget are replaced by
 * `{"clipped": <their size>}`; a message that alone does not fit is cut (and ends with `…`).
 */
export function logLine(at: number, attempt: number, message: unknown, fields: unknown): JobLogLine {
  let text = typeof message === "string" ? message : String(message);
  let json: JsonObject | null = null;
  if (fields !== undefined && fields !== null) {
    try {
      const round = JSON.parse(JSON.stringify(fields) ?? "null") as unknown;
      json = isJsonObject(round) ? round : round === null ? null : { value: round as JsonObject[string] };
    } catch (e) {
      json = { unserializable: String(e) };
    }
  }
  if (bytes(text) > LOG_LINE_MAX_BYTES) text = cut(text, LOG_LINE_MAX_BYTES - 3) + "…";
  if (json !== null) {
    const size = bytes(JSON.stringify(json));
    if (bytes(text) + size > LOG_LINE_MAX_BYTES) json = { clipped: size };
    if (bytes(text) + bytes(JSON.stringify(json)) > LOG_LINE_MAX_BYTES) json = null;
  }
  return { at: Math.round(at), attempt: Math.max(0, Math.round(attempt)), message: text, fields: json };
}

/** cut: at most `max` UTF-8 bytes of `s`, never splitting a character. */
function cut(s: string, max: number): string {
  let out = "";
  let used = 0;
  for (const ch of s) {
    const b = bytes(ch);
    if (used + b > max) break;
    out += ch;
    used += b;
  }
  return out;
}

/**
 * readLogLines: what a handler Worker or a pull worker sent, as lines to store: anything not a line is
 * dropped (a log must never cost a job its outcome), each is clipped again, the newest LOG_LINES_PER_JOB kept.
 */
export function readLogLines(raw: unknown): JobLogLine[] {
  if (!Array.isArray(raw)) return [];
  const out: JobLogLine[] = [];
  for (const item of raw.slice(-LOG_LINES_PER_JOB)) {
    if (typeof item !== "object" || item === null) continue;
    const l = item as Record<string, unknown>;
    if (typeof l.message !== "string" || typeof l.at !== "number" || !Number.isFinite(l.at)) continue;
    const attempt = typeof l.attempt === "number" && Number.isFinite(l.attempt) ? l.attempt : 0;
    out.push(logLine(l.at, attempt, l.message, l.fields ?? null));
  }
  return out;
}

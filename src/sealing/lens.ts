/**
 * How a stored value is shown, by who asks (docs/operating.md "Sensitive
 * values"): a handler — a pushed attempt's call, a pull worker's claim, a
 * step's replay — gets every value opened; everyone else (the API's views,
 * the dashboard, subscriptions, callbacks, lifecycle events) gets them opened
 * too, except a sensitive type's values and a sensitive step's, which read
 * `"[redacted]"`.
 *
 * A sensitive step's value is stored marked: the JSON string
 * `"$sensitive:<its JSON>"` (sealed like any other when keys are listed), so
 * the mark travels with the value wherever a statement copies it. A sensitive
 * type's values need no mark: every view of them knows their type.
 *
 * Sealed values sit at a value's top (a payload, a result, a step's value) or
 * as leaves of what the queue wraps around them (a child's result in its
 * invoke step, a signal's data, an event's payload); a walk finds both. Text
 * without `"$se` in it holds neither and is parsed as it is.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { REDACTED } from "./redacted";
import { NO_KEYS, SealError, Vault, vaultOf } from "./vault";

export { REDACTED };
const SENSITIVE = "$sensitive:";

/** markSensitive: a value's JSON text, marked as a sensitive step's. */
export function markSensitive(json: string): string {
  return json.startsWith(`"${SENSITIVE}`) ? json : JSON.stringify(`${SENSITIVE}${json}`);
}

/** A view's reach: a handler opens everything; a reader is shown what is not sensitive. */
type Reach = "handler" | "reader";

export class Lens {
  constructor(
    readonly vault: Vault,
    private readonly sensitiveTypes: ReadonlySet<string>,
  ) {}

  /** sensitive: whether a type's values are shown redacted. */
  sensitive(type: string): boolean {
    return this.sensitiveTypes.has(type);
  }

  /** seal: a value's JSON text as stored (vault.ts). */
  seal(json: string): string {
    return this.vault.sealText(json);
  }

  sealNullable(json: string | null): string | null {
    return json === null ? null : this.vault.sealText(json);
  }

  /**
   * storedLength: a bound on a value's stored length, in json-chunks.ts's units (code units of at most 3 UTF-8 bytes),
   * from its JSON text's length: sealed, it is base64 of at most 3 bytes a code unit — ASCII, 4 characters every 3 bytes.
   */
  storedLength(length: number): number {
    return this.vault.on ? Math.ceil((length * 4) / 3) + 80 : length;
  }

  /** sealValue: a parsed value as it is stored inside what the queue wraps around it (an event in a wait's answer). */
  sealValue(value: unknown): unknown {
    return this.vault.on ? JSON.parse(this.vault.sealText(JSON.stringify(value))) : value;
  }

  /** handlerText: a stored value's JSON text as a handler gets it — opened, unmarked. Throws SealError when a value does not open. */
  handlerText(text: string): string {
    return mayHold(text) ? JSON.stringify(this.walk(JSON.parse(text), "handler")) : text;
  }

  /** handlerValue: an already parsed value (a journal, a wait's answer) as a handler gets it. */
  handlerValue<T>(value: T): T {
    return this.walk(value, "handler") as T;
  }

  /** show: a stored value's JSON text as a reader sees it, for a job of `type`. */
  show(text: string, type: string): unknown {
    if (this.sensitive(type)) return REDACTED;
    return mayHold(text) ? this.walk(JSON.parse(text), "reader") : JSON.parse(text);
  }

  /** showValue: an already parsed value as a reader sees it, for a job of `type`. */
  showValue(value: unknown, type: string): unknown {
    return this.sensitive(type) ? REDACTED : this.walk(value, "reader");
  }

  /** showString: a plain string kept sealed (a log line's message) as a reader sees it. */
  showString(text: string, type: string): string {
    if (this.sensitive(type)) return REDACTED;
    if (!Vault.isSealed(text)) return text;
    const v = this.leaf(text, "reader");
    return typeof v === "string" ? v : JSON.stringify(v);
  }

  /** handlerString: a plain string kept sealed, opened. */
  handlerString(text: string): string {
    if (!Vault.isSealed(text)) return text;
    const v = this.leaf(text, "handler");
    return typeof v === "string" ? v : JSON.stringify(v);
  }

  private walk(v: unknown, reach: Reach): unknown {
    if (typeof v === "string") return v.startsWith("$se") ? this.leaf(v, reach) : v;
    if (Array.isArray(v)) return v.map((x) => this.walk(x, reach));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.walk(x, reach);
      return out;
    }
    return v;
  }

  /** leaf: a sealed or marked string's value. What it opens to is the caller's data, and is not walked again. */
  private leaf(s: string, reach: Reach): unknown {
    if (s.startsWith(SENSITIVE)) {
      if (reach === "reader") return REDACTED;
      const inner: unknown = JSON.parse(s.slice(SENSITIVE.length));
      return typeof inner === "string" && Vault.isSealed(inner) ? this.leaf(inner, reach) : inner;
    }
    if (!Vault.isSealed(s)) return s;
    let opened: unknown;
    try {
      opened = JSON.parse(this.vault.openString(s));
    } catch (e) {
      // A reader's listing still shows the job; a handler never runs on a value it cannot have.
      if (reach === "reader" && e instanceof SealError) return `[sealed: ${e.message}]`;
      throw e;
    }
    return typeof opened === "string" && opened.startsWith(SENSITIVE) ? this.leaf(opened, reach) : opened;
  }
}

/** mayHold: whether JSON text can hold a sealed or marked string (both start `"$se`). */
function mayHold(text: string): boolean {
  return text.includes('"$se');
}

/** PLAIN_LENS: no keys, nothing sensitive — rows from code that never sealed (scope/wire-compat.ts). */
export const PLAIN_LENS = new Lens(NO_KEYS, new Set());

const lenses = new WeakMap<QueueConfig, Map<Vault, Lens>>();

/** lensOf: the lens of an env's keys and a config's sensitive types, one per pair; throws `misconfigured` for a bad key secret. */
export function lensOf(env: { EDGEQUEUE_ENCRYPTION_KEYS?: string }, config: QueueConfig): Lens {
  const vault = vaultOf(env);
  let byVault = lenses.get(config);
  if (!byVault) lenses.set(config, (byVault = new Map()));
  let lens = byVault.get(vault);
  if (!lens) byVault.set(vault, (lens = new Lens(vault, new Set(config.sensitiveTypes))));
  return lens;
}

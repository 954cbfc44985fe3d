/**
 * How a stored value is shown, by who asks (docs/operating.md "Encryption at rest", "Sensitive values").
 *
 * Two steps, in two places. In the scope object, where a row becomes a view, synchronously and with no
 * cryptography: a sensitive type's values and a sensitive step's read `"[redacted]"` to a reader, a sensitive
 * step's mark comes off for its handler, and sealed values stay sealed (`show`, `handlerText`). Then, where the
 * view leaves for whoever asked, sealed values are opened with the platform's native AES-GCM (`openDeep`): in the
 * coordinator for the API's answers and a pull worker's claims (scope/api.ts scopeRpc, off the object's serial
 * CPU), in the object before a pushed handler's call (push/dispatch-port.ts). What the object itself sends or keeps
 * from a view — subscriptions, a failure handler's payload, an event matched — is opened there synchronously
 * (`openSync`, @noble/ciphers), off the job path.
 *
 * A sensitive step's value is stored marked: its sealed JSON, as the string `"$sensitive:v1:<its JSON>"` at the top
 * of the step's stored text only (a value the queue marks is never looked into for one). A sensitive type's values
 * need no mark: every view of them knows their type.
 *
 * @module
 */
import type { QueueConfig } from "../config/schema";
import { REDACTED } from "./redacted";
import { NO_KEYS, SealError, Vault, vaultOf } from "./vault";

export { REDACTED };
const SENSITIVE = "$sensitive:v1:";
const MARKED = `"${SENSITIVE}`;

/** markSensitive: a step's stored (sealed) JSON text, marked as a sensitive step's. */
export function markSensitive(json: string): string {
  return json.startsWith(MARKED) ? json : JSON.stringify(`${SENSITIVE}${json}`);
}

/** unmark: a marked step's stored JSON text without its mark; any other text as it is. */
function unmark(text: string): string {
  return text.startsWith(MARKED) ? (JSON.parse(text) as string).slice(SENSITIVE.length) : text;
}

/** Who a value is opened for: a handler never runs on a value that does not open; a reader is told of it. */
export type Reach = "handler" | "reader";

export class Lens {
  constructor(
    readonly vault: Vault,
    private readonly sensitiveTypes: ReadonlySet<string>,
  ) {}

  /** sensitive: whether a type's values are shown redacted. */
  sensitive(type: string): boolean {
    return this.sensitiveTypes.has(type);
  }

  // ------------------------------------------------------------ stored (sync: inside an object's write)

  /** seal: a value's JSON text as stored (vault.ts); unchanged without keys, or sealed already. */
  seal(json: string): string {
    return this.vault.sealText(json);
  }

  sealNullable(json: string | null): string | null {
    return json === null ? null : this.vault.sealText(json);
  }

  /** sealValue: a parsed value as it is stored inside what the queue wraps around it (an event in a wait's answer). */
  sealValue(value: unknown): unknown {
    return this.vault.on ? JSON.parse(this.vault.sealText(JSON.stringify(value))) : value;
  }

  /**
   * storedLength: a bound on a value's stored length, in json-chunks.ts's units (code units of at most 3 UTF-8 bytes),
   * from its JSON text's length: sealed, it is base64 of at most 3 bytes a code unit — ASCII, 4 characters every 3 bytes.
   */
  storedLength(length: number): number {
    return this.vault.on ? Math.ceil((length * 4) / 3) + 80 : length;
  }

  // ------------------------------------------------------------ views (sync, no cryptography: in the object)

  /** show: a stored value's JSON text as a reader's view holds it — redacted when sensitive, sealed values left sealed. */
  show(text: string, type: string): unknown {
    return this.sensitive(type) || text.startsWith(MARKED) ? REDACTED : JSON.parse(text);
  }

  /** handlerText: a stored value's JSON text as a handler's view holds it — its mark off, sealed values left sealed. */
  handlerText(text: string): string {
    return unmark(text);
  }

  // ------------------------------------------------------------ opening

  /**
   * openDeep: a view with every sealed value in it opened (native AES-GCM): sealed strings anywhere, and JSON texts
   * that hold some (a journal entry's result). A value that does not open throws SealError for a handler, and reads
   * `[sealed: …]` to a reader.
   */
  async openDeep<T>(value: T, reach: Reach): Promise<T> {
    if (!holdsSealed(value)) return value;
    return (await this.walk(value, reach, (s) => this.vault.openStringAsync(s))) as T;
  }

  /** openSync: openDeep, synchronously (@noble/ciphers): for what the object sends or keeps itself, off the job path. */
  openSync<T>(value: T, reach: Reach): T {
    if (!holdsSealed(value)) return value;
    return this.walkSync(value, reach) as T;
  }

  /** openText: a stored value's JSON text opened synchronously (an event's payload matched, a schedule's fired). */
  openText(text: string): string {
    return text.includes(SEALED_MARK) ? JSON.stringify(this.openSync(JSON.parse(unmark(text)), "handler")) : unmark(text);
  }

  private async walk(v: unknown, reach: Reach, open: (s: string) => Promise<string>): Promise<unknown> {
    if (typeof v === "string") {
      if (Vault.isSealed(v)) {
        try {
          return await this.walk(JSON.parse(await open(v)), reach, open);
        } catch (e) {
          return unopened(e, reach);
        }
      }
      // A JSON text that holds sealed values (a journal entry's result): opened inside, kept as text.
      if (v.includes(SEALED_MARK) && (v.startsWith('"') || v.startsWith("{") || v.startsWith("["))) {
        const parsed = tryParse(v);
        if (parsed !== undefined) return JSON.stringify(await this.walk(parsed, reach, open));
      }
      return v;
    }
    if (Array.isArray(v)) return Promise.all(v.map((x) => this.walk(x, reach, open)));
    if (v !== null && typeof v === "object") {
      const entries = await Promise.all(Object.entries(v).map(async ([k, x]) => [k, await this.walk(x, reach, open)] as const));
      return Object.fromEntries(entries);
    }
    return v;
  }

  private walkSync(v: unknown, reach: Reach): unknown {
    if (typeof v === "string") {
      if (Vault.isSealed(v)) {
        try {
          return this.walkSync(JSON.parse(this.vault.openString(v)), reach);
        } catch (e) {
          return unopened(e, reach);
        }
      }
      if (v.includes(SEALED_MARK) && (v.startsWith('"') || v.startsWith("{") || v.startsWith("["))) {
        const parsed = tryParse(v);
        if (parsed !== undefined) return JSON.stringify(this.walkSync(parsed, reach));
      }
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => this.walkSync(x, reach));
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.walkSync(x, reach)]));
    return v;
  }
}

const SEALED_MARK = "$sealed:v1:";

/** holdsSealed: whether a value can hold a sealed string, read cheaply: its JSON has the mark. */
function holdsSealed(value: unknown): boolean {
  if (typeof value === "string") return value.includes(SEALED_MARK);
  if (value === null || typeof value !== "object") return false;
  return JSON.stringify(value).includes(SEALED_MARK);
}

function unopened(e: unknown, reach: Reach): string {
  // A reader's listing still shows the job; a handler never runs on a value it cannot have.
  if (reach === "reader" && e instanceof SealError) return `[sealed: ${e.message}]`;
  throw e;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
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

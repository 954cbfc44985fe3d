/**
 * The audit list (docs/operating.md "Tokens and roles"): each operator action, recorded after it succeeded with the
 * name and role of the token that made it, in the main catalog object (catalog/audit-store.ts). What it acted on is
 * kept, not what it carried: a rerun's new payload, a signal's data and a schedule's payload are left out, so the
 * list holds no customer data.
 *
 * @module
 */
import type { Principal } from "../auth/tokens";
import { catalogName } from "../catalog/shards";
import type { AuditEntry, AuditQuery } from "../job/schemas/audit";
import type { QueueContext } from "./queue-context";

/** Body fields that carry a caller's data, not what was acted on. */
const DATA_FIELDS = new Set(["payload", "data", "result", "request"]);
/** An entry's detail is kept to this many characters of JSON. */
const DETAIL_MAX_CHARS = 4000;

/** auditDetail: what a call acted on (its path's parameters, its body less data) and the counts it answered. */
export function auditDetail(input: { params?: unknown; body?: unknown }, answer: unknown): string {
  const body = input.body && typeof input.body === "object" ? Object.fromEntries(Object.entries(input.body).filter(([k, v]) => !DATA_FIELDS.has(k) && v !== undefined)) : undefined;
  const counts = answer && typeof answer === "object" ? Object.fromEntries(Object.entries(answer).filter(([, v]) => typeof v === "number" || typeof v === "boolean")) : {};
  const job = (answer as { job?: { id?: unknown } } | null)?.job?.id;
  const detail = {
    ...(input.params && Object.keys(input.params).length > 0 ? { params: input.params } : {}),
    ...(body && Object.keys(body).length > 0 ? { body } : {}),
    ...(Object.keys(counts).length > 0 ? { answered: counts } : {}),
    ...(typeof job === "string" ? { job } : {}),
  };
  const text = JSON.stringify(detail);
  return text.length <= DETAIL_MAX_CHARS ? text : JSON.stringify({ clipped: text.slice(0, DETAIL_MAX_CHARS) });
}

export class Audit {
  constructor(private readonly q: QueueContext) {}

  private catalog() {
    return this.q.env.CATALOG.getByName(catalogName(0));
  }

  /** record: an action `who` made. */
  async record(who: Principal, action: string, detail: string): Promise<void> {
    await this.catalog().audit({ token: who.name, role: who.role, action, detail });
  }

  page(query: AuditQuery): Promise<{ items: AuditEntry[]; next: number | null }> {
    return this.catalog().auditPage(query);
  }
}

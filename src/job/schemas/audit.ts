/**
 * The audit list (docs/operating.md "Tokens and roles"): `GET /v1/audit`.
 *
 * @module
 */
import { z } from "zod";
import { ROLES } from "../../auth/roles";

export const AuditEntrySchema = z.object({
  id: z.number().int().meta({ description: "Its place in the list: newer entries have larger ids (the cursor `before`)." }),
  at: z.number().meta({ description: "When the action was made (epoch ms)." }),
  token: z.string().meta({ description: "The name of the token that made it (`service binding` for a call over RPC)." }),
  role: z.enum(ROLES),
  action: z.string().meta({ description: "The operationId (`cancelJob`, `pauseType`, `setPoolLimits`, …), or `dashboard <path>` for a dashboard action." }),
  detail: z.record(z.string(), z.unknown()).meta({ description: "What it acted on: its path's parameters and body (payloads and signal data left out), and the counts it answered." }),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

export const AuditQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z.coerce.number().int().min(1).optional().meta({ description: "Entries older than this id (the previous page's `next`)." }),
  token: z.string().min(1).max(64).optional().meta({ description: "Only this token's actions." }),
  action: z.string().min(1).max(128).optional().meta({ description: "Only this action." }),
});
export type AuditQuery = z.infer<typeof AuditQuerySchema>;

export const AuditResultSchema = z.object({
  items: z.array(AuditEntrySchema).meta({ description: "Newest first." }),
  next: z.number().int().nullable().meta({ description: "Pass as `before` for older entries; null when there are none." }),
});

/**
 * Error groups (docs/operating.md "Error groups"): `GET /v1/errors` — attempts that ended in an error, grouped per
 * type by a fingerprint of the error (job/error-group.ts) — and a group's failed jobs retried or its jobs rerun.
 *
 * @module
 */
import { z } from "zod";
import { JobTypeName } from "./pieces";

export const ErrorGroupSchema = z.object({
  type: z.string(),
  fingerprint: z.string().meta({ description: "16 hex characters: the group's kind, masked message and first frame, hashed." }),
  kind: z.enum(["error", "fatal", "timeout", "stalled", "nondeterminism"]).meta({
    description:
      "error: a thrown error (retried, or its retries spent); fatal: a TerminalJobError or a refused step; timeout: past its timeoutMs; stalled: its lease lapsed; nondeterminism: a replay that no longer matched its journal.",
  }),
  message: z.string().meta({ description: "The error's first line with what varies between jobs masked: <id>, <n>, <time>, <email>." }),
  frame: z.string().nullable().meta({ description: "The first frame of its stack, when the handler's runtime sent one." }),
  sample: z.string().meta({ description: "The group's first error as it was (500 characters at most)." }),
  firstAt: z.number(),
  firstJobId: z.string(),
  lastAt: z.number(),
  lastJobId: z.string(),
  total: z.number().int().meta({ description: "Attempts counted since the group was first seen (it is forgotten a week after its last)." }),
  lastHour: z.number().int().meta({ description: "Attempts in about the last hour (five-minute buckets)." }),
  lastDay: z.number().int().meta({ description: "Attempts in about the last day." }),
  recentJobIds: z.array(z.string()).meta({ description: "The newest jobs of the group (up to 20 per object): what a group's retry or rerun acts on." }),
});
export type ErrorGroup = z.infer<typeof ErrorGroupSchema>;

export const ErrorsQuerySchema = z.strictObject({
  type: JobTypeName.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
export const ErrorsResultSchema = z.object({
  items: z.array(ErrorGroupSchema).meta({ description: "Groups, the most attempts in the last hour first (then the last day, then the latest)." }),
  complete: z.boolean().meta({ description: "false: there were more objects with jobs than one call visits (200); narrow with `type`." }),
});
export type ErrorsResult = z.infer<typeof ErrorsResultSchema>;

export const ErrorGroupActionSchema = z.strictObject({
  type: JobTypeName,
  fingerprint: z.string().regex(/^[0-9a-f]{16}$/, "a group's fingerprint (16 hex characters)"),
});
export type ErrorGroupAction = z.infer<typeof ErrorGroupActionSchema>;
export const ErrorGroupActionResultSchema = z.object({
  changed: z.number().int().meta({ description: "Jobs retried (back to pending), or reruns made: the group's newest jobs that failed for good." }),
  skipped: z.number().int().meta({ description: "Jobs of the group left as they were: completed after their error, pending or running again, cancelled, or gone." }),
});

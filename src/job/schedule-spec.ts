/**
 * A schedule as the API and the config take it, validated with zod (the cron
 * expression is parsed here, so a bad one is refused naming `cron`), and the
 * Schedule object the API returns.
 *
 * It lives beside the API's other shapes (job/schemas/), not in schedule/: the
 * config validates its `schedules` with it and the schedule object reads the
 * config, so in schedule/ the two folders would import each other
 * (scripts/check-cycles.mjs).
 *
 * @module
 */
import { z } from "zod";
import { JobTypeName, JsonObjectSchema, ScopeSchema } from "./schemas";
import { checkTimeZone, CronError, parseCron } from "../cron";

export const MISFIRE = ["latest", "earliest", "none", "catchup"] as const;
export type Misfire = (typeof MISFIRE)[number];

/** With `catchup`, at most this many missed slots fire unless maxCatchup says otherwise. */
export const MAX_CATCHUP_DEFAULT = 1000;

export const ScheduleNameSchema = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "schedule names are 1-64 characters of A-Z a-z 0-9 . _ -");
export const ScheduleParams = z.strictObject({ name: ScheduleNameSchema });

export const ScheduleSpecSchema = z
  .strictObject({
    type: JobTypeName,
    payload: JsonObjectSchema.optional(),
    scope: ScopeSchema.optional(),
    cron: z.string().min(1).max(256).optional().meta({ description: "5 fields, minute resolution, in `tz` (default UTC)." }),
    tz: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: "The IANA time zone a cron expression's times are in (default UTC): fired at that wall-clock time across daylight saving changes (docs/schedules-and-events.md)." }),
    everyMs: z.number().int().min(1000).max(366 * 86_400_000).optional().meta({ description: "A fixed grid from when the schedule was created; no drift." }),
    at: z.number().int().min(0).max(8.64e15).optional().meta({ description: "Fires once, at this time (epoch ms)." }),
    misfire: z.enum(MISFIRE).optional().meta({ description: "After downtime: latest (default) fires the last missed slot once; earliest the oldest; none skips them; catchup fires every one, oldest first." }),
    maxCatchup: z.number().int().min(1).max(100_000).optional(),
    paused: z.boolean().optional(),
  })
  .superRefine((s, ctx) => {
    const given = (["cron", "everyMs", "at"] as const).filter((k) => s[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({ code: "custom", path: [given[1] ?? "cron"], message: "give exactly one of cron, everyMs and at" });
    }
    if (s.cron !== undefined) {
      try {
        parseCron(s.cron);
      } catch (e) {
        if (e instanceof CronError) ctx.addIssue({ code: "custom", path: ["cron"], message: e.message });
        else throw e;
      }
    }
    if (s.tz !== undefined) {
      if (s.cron === undefined) ctx.addIssue({ code: "custom", path: ["tz"], message: "tz applies to a cron expression; everyMs and at are times, not wall-clock ones" });
      try {
        checkTimeZone(s.tz);
      } catch (e) {
        if (e instanceof CronError) ctx.addIssue({ code: "custom", path: ["tz"], message: e.message });
        else throw e;
      }
    }
    if (s.maxCatchup !== undefined && s.misfire !== "catchup") ctx.addIssue({ code: "custom", path: ["maxCatchup"], message: "maxCatchup applies to misfire = catchup" });
  });
export type ScheduleSpec = z.infer<typeof ScheduleSpecSchema>;

export const ScheduleSchema = z.object({
  name: z.string(),
  type: z.string(),
  payload: JsonObjectSchema,
  scope: ScopeSchema.nullable(),
  cron: z.string().nullable(),
  tz: z.string().meta({ description: "The time zone of `cron` (UTC unless one was given)." }),
  everyMs: z.number().nullable(),
  at: z.number().nullable(),
  misfire: z.enum(MISFIRE),
  maxCatchup: z.number().nullable(),
  paused: z.boolean(),
  source: z.enum(["api", "config"]).meta({ description: "config: declared in the config, kept in sync on start, not changed over the API." }),
  nextRunAt: z.number().nullable(),
  nextRunAtLocal: z.string().nullable().meta({ description: "nextRunAt as the wall clock in `tz` shows it, with its offset (2026-03-29T03:00:00+02:00)." }),
  lastFiredAt: z.number().nullable().meta({ description: "The slot of the last fire." }),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Schedule = z.infer<typeof ScheduleSchema>;
export const ScheduleResultSchema = z.object({ schedule: ScheduleSchema });
export const ScheduleListSchema = z.object({ items: z.array(ScheduleSchema) });

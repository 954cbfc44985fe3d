/**
 * Live subscriptions (docs/http-api.md "Live subscriptions"): what `POST /v1/subscriptions` takes — one job, a
 * type's jobs under one dedupe key, or a scope's jobs — and the signed URL it answers.
 *
 * @module
 */
import { z } from "zod";
import { boundedName, JobId, JobTypeName, ScopeSchema } from "./pieces";

/** Subscription URLs may be opened this long unless the request says otherwise, and at most SUBSCRIPTION_TTL_MAX_MS. */
export const SUBSCRIPTION_TTL_DEFAULT_MS = 15 * 60_000;
export const SUBSCRIPTION_TTL_MAX_MS = 24 * 3600_000;
export const SUBSCRIPTION_PATH = "/v1/subscriptions";

/**
 * What a subscription may carry besides its jobs' states (docs/http-api.md "Live subscriptions", "What a subscription
 * carries"): chosen when its URL is minted and signed into it, since the page that opens it holds no token.
 */
export const SUBSCRIPTION_PARTS = ["progress", "steps", "logs", "result", "payload"] as const;
export type SubscriptionPart = (typeof SUBSCRIPTION_PARTS)[number];
/** Without `include`: no payload, no log lines (a page on another origin shows how a job goes, not what it was given). */
export const SUBSCRIPTION_PARTS_DEFAULT: readonly SubscriptionPart[] = ["progress", "steps", "result"];
const IncludeSchema = z
  .array(z.enum(SUBSCRIPTION_PARTS))
  .max(SUBSCRIPTION_PARTS.length)
  .refine((parts) => new Set(parts).size === parts.length, "names a part twice");

export const CreateSubscriptionSchema = z
  .strictObject({
    jobId: JobId.optional().meta({ description: "Follow this job until it ends." }),
    type: JobTypeName.optional().meta({
      description: "With dedupeKey: follow the jobs of this type under the key (its live one, and any enqueued later). With scope alone: every job of this type in the scope.",
    }),
    dedupeKey: boundedName(512).optional(),
    scope: ScopeSchema.optional().meta({ description: "Alone: follow every job of the scope. With type and dedupeKey: the key's jobs in that scope." }),
    include: IncludeSchema.optional()
      .meta({
        description:
          "What it carries besides each job's state (its view without payload, result and progress): `progress` (the view's progress and `progress` messages), `steps` (`step` messages), `logs` (`log` messages), `result` (the view's result and `result` messages), `payload` (the view's payload). Default: progress, steps and result — never the payload or log lines unless asked.",
      }),
    ttlMs: z
      .number()
      .int()
      .min(1000)
      .max(SUBSCRIPTION_TTL_MAX_MS)
      .default(SUBSCRIPTION_TTL_DEFAULT_MS)
      .meta({ description: "How long the URL may be opened (default 15 minutes, at most 24 hours); a connection opened in time stays open." }),
  })
  .superRefine((b, ctx) => {
    if (b.jobId !== undefined) {
      for (const other of ["type", "dedupeKey", "scope"] as const) {
        if (b[other] !== undefined) ctx.addIssue({ code: "custom", path: [other], message: "is not taken with jobId: a subscription follows one job, one key or one scope" });
      }
    } else if (b.type !== undefined && b.dedupeKey === undefined && b.scope === undefined) {
      ctx.addIssue({ code: "custom", path: ["dedupeKey"], message: "is required with type, unless scope is given: the key whose jobs to follow (a type's jobs everywhere: POST /v1/subscriptions/homes)" });
    }
    else if (b.type === undefined && b.dedupeKey !== undefined) ctx.addIssue({ code: "custom", path: ["type"], message: "is required with dedupeKey: the type whose jobs hold the key" });
    else if (b.type === undefined && b.scope === undefined) ctx.addIssue({ code: "custom", path: ["jobId"], message: "give jobId, type and dedupeKey (and scope), or scope alone" });
  });
export type CreateSubscription = z.infer<typeof CreateSubscriptionSchema>;

/** Live subscriptions of every object holding jobs (of a type): `POST /v1/subscriptions/homes` (client/queue-events.ts). */
export const CreateHomeSubscriptionsSchema = z.strictObject({
  type: JobTypeName.optional().meta({ description: "Only this type's jobs: its own objects, then each scope holding some. Without it, every job of every object holding some." }),
  include: IncludeSchema.optional().meta({ description: "What each URL carries besides states, as in POST /v1/subscriptions." }),
  ttlMs: z.number().int().min(1000).max(SUBSCRIPTION_TTL_MAX_MS).default(SUBSCRIPTION_TTL_DEFAULT_MS),
  limit: z.number().int().min(1).max(100).default(100).meta({ description: "Objects per page." }),
  since: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: "Jobs that ended at or after this time (epoch ms) come in each subscription's first message (`ended`): an object found late is caught up on." }),
  cursor: z.string().max(4096).optional().meta({ description: "A previous page's nextCursor." }),
});
export type CreateHomeSubscriptions = z.infer<typeof CreateHomeSubscriptionsSchema>;

export const HomeSubscriptionsSchema = z.object({
  items: z.array(z.object({ home: z.string().meta({ description: "The object (its name)." }), url: z.string(), path: z.string() })),
  expiresAt: z.number(),
  include: z.array(z.enum(SUBSCRIPTION_PARTS)),
  nextCursor: z.string().nullable().meta({ description: "More objects: pass it back as `cursor`; null when done." }),
});
export type HomeSubscriptionsAnswer = z.infer<typeof HomeSubscriptionsSchema>;

export const SubscriptionSchema = z.object({
  url: z.string().meta({
    description:
      "Open it from anywhere, with no token: a WebSocket upgrade, or a GET with `Accept: text/event-stream` (docs/http-api.md \"Live subscriptions\"). On the queue's `publicUrl` when configured, else on the origin the request came to; over RPC without a publicUrl, the path alone.",
  }),
  path: z.string().meta({ description: "The URL's path: `/v1/subscriptions/<signed token>`." }),
  expiresAt: z.number().meta({ description: "The URL may be opened until then (epoch ms)." }),
  include: z.array(z.enum(SUBSCRIPTION_PARTS)).meta({ description: "What it carries besides each job's state, as signed into it." }),
});
export type SubscriptionAnswer = z.infer<typeof SubscriptionSchema>;

/**
 * A live subscription (docs/http-api.md "Live subscriptions"): what it follows — one job, the jobs of a type under
 * one dedupe key, or every job of a scope — in the object that holds them, and until when its URL may be opened.
 * Its URL carries it signed: `/v1/subscriptions/<base64url of the JSON>.<signature>`, the signature the first 16
 * bytes of an HMAC-SHA256 under a key derived from the queue's QUEUE_TOKEN (not the key wait tokens use: one kind
 * of token is never the other). A browser opens it without the queue's token, which it must never hold; the
 * coordinator checks the signature and the expiry before any object hears of it, so a forged or stale URL costs no
 * Durable Object a request.
 *
 * @module
 */
import { decodeText, encodeText } from "../base64url";
import { macMatches, queueMac } from "./queue-mac";
import { SUBSCRIPTION_PARTS_DEFAULT, type SubscriptionPart } from "./schemas/subscriptions";

/** What a subscription follows in its object: one job, a type's jobs under one key, every job of a type, or every job. */
export type Follows = { kind: "job"; id: string } | { kind: "key"; type: string; key: string } | { kind: "type"; type: string } | { kind: "scope" };

export type Subscription = Follows & {
  /** The object that holds what it follows (docs/design.md "Where a job lives, and its id"). */
  home: string;
  /** The URL may be opened until then (epoch ms); a connection opened in time stays open. */
  exp: number;
  /** What it carries besides states (SUBSCRIPTION_PARTS); absent: the default (a URL minted before it was chosen). */
  inc?: SubscriptionPart[];
  /** A type's or scope's: jobs that ended at or after this (epoch ms) open it, in the first message's `ended`. */
  since?: number;
};

/** carries: whether a subscription carries this part. */
export function carries(sub: Pick<Subscription, "inc">, part: SubscriptionPart): boolean {
  return (sub.inc ?? SUBSCRIPTION_PARTS_DEFAULT).includes(part);
}


/** signSubscription: the token of a subscription URL (the last part of its path). */
export async function signSubscription(queueToken: string, sub: Subscription): Promise<string> {
  const body = encodeText(JSON.stringify(sub));
  return `${body}.${await queueMac(queueToken, "edgequeue subscriptions", body)}`;
}

export type Verified = { ok: true; sub: Subscription } | { ok: false; why: string };

/** verifySubscription: the subscription a token carries, when this queue signed it and its URL has not expired. */
export async function verifySubscription(queueToken: string, token: string, now: number): Promise<Verified> {
  const parts = typeof token === "string" && token.length <= 4096 ? token.split(".") : [];
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]{22}$/.test(parts[1]!)) return { ok: false, why: "this is not a subscription URL" };
  if (!(await macMatches(queueToken, "edgequeue subscriptions", parts[0]!, parts[1]!))) return { ok: false, why: "this subscription URL was not signed by this queue" };
  const text = decodeText(parts[0]!);
  const sub = text === null ? null : (JSON.parse(text) as Subscription);
  if (!sub || typeof sub.home !== "string" || typeof sub.exp !== "number") return { ok: false, why: "this is not a subscription URL" };
  if (now >= sub.exp) return { ok: false, why: `this subscription URL expired at ${new Date(sub.exp).toISOString()}: ask your backend for a new one` };
  return { ok: true, sub };
}

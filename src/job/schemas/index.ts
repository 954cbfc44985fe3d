/**
 * The request and response shapes of the API (docs/http-api.md) as zod schemas, by area. The
 * operations' declarations (src/api/) name them, the coordinator validates every input with them, and
 * `GET /v1/openapi.json` is generated from them. Gathered here for the many modules that use a few of
 * several areas; each area's module can be imported on its own.
 *
 * @module
 */
export * from "./pieces";
export * from "./job";
export * from "./enqueue";
export * from "./listing";
export * from "./stats";
export * from "./changes";
export * from "./bulk";
export * from "./errors";
export * from "./journal";
export * from "./leases";
export * from "./events";
export * from "./pools";
export * from "./subscriptions";
export * from "./callbacks";

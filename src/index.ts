/**
 * The coordinator Worker: wiring only.
 *
 * - `default`: the HTTP API (Hono).
 * - `EdgeQueue`: the RPC entrypoint for Workers that bind to the queue.
 * - `ScopeDO`, `CatalogDO`: the Durable Object classes.
 *
 * The config is validated here, when the Worker starts, so a bad
 * `EDGEQUEUE_CONFIG` stops `wrangler dev` / `wrangler deploy` with a message
 * that names the field.
 *
 * @module
 */
import { env } from "cloudflare:workers";
import { checkBindings, loadConfig } from "./config/load";
import { createApp } from "./coordinator/app";

const config = loadConfig(env as { EDGEQUEUE_CONFIG?: unknown });
checkBindings(config, env);
for (const warning of config.warnings) console.warn(JSON.stringify({ event: "config:warning", warning }));

export { CatalogDO } from "./catalog/catalog-do";
export { EdgeQueue } from "./coordinator/rpc";
export { PoolDO } from "./pool/pool-do";
export { ScheduleDO } from "./schedule/schedule-do";
export { ScopeDO } from "./scope/scope-do";
export { WaitDO } from "./wait/wait-do";

export default createApp();

/**
 * defineConfig: the queue config in TypeScript (edgequeue.config.ts), typed
 * key by key; the same settings as the `EDGEQUEUE_CONFIG` var, checked when
 * the Worker starts (createQueue) and by `edgequeue check`, with the same
 * messages (docs/configuration.md "Configuration").
 *
 * @module
 */
import type { QueueConfigInput } from "./schema";

export type { QueueConfigInput };

/** defineConfig returns its argument: it exists for the types (and for `edgequeue check` to find the default export). */
export function defineConfig<const C extends QueueConfigInput>(config: C): C {
  return config;
}

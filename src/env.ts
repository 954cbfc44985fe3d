/**
 * The coordinator Worker's bindings (wrangler.toml).
 *
 * @module
 */
import type { CatalogDO } from "./catalog/catalog-do";
import type { PoolDO } from "./pool/pool-do";
import type { ScheduleDO } from "./schedule/schedule-do";
import type { ScopeDO } from "./scope/scope-do";
import type { WaitDO } from "./claim-wait/wait-do";

export interface Env {
  SCOPE: DurableObjectNamespace<ScopeDO>;
  CATALOG: DurableObjectNamespace<CatalogDO>;
  POOL: DurableObjectNamespace<PoolDO>;
  SCHEDULE: DurableObjectNamespace<ScheduleDO>;
  /** Where pull claims that asked to wait park, one object per job type (claim-wait/wait-do.ts). */
  WAIT: DurableObjectNamespace<WaitDO>;
  /** Bearer token for the HTTP API (a secret; `.dev.vars` locally). Unset: every call is refused. */
  QUEUE_TOKEN?: string;
  /**
   * Tokens with names and roles (a secret): a JSON array of `{ name, role, sha256, types?, scopeTypes? }`, `sha256`
   * the hex SHA-256 of each token (auth/tokens.ts; docs/operating.md "Tokens and roles").
   */
  QUEUE_TOKENS?: string;
  /**
   * Keys that seal stored values (a secret; sealing/keys.ts; docs/operating.md "Encryption at rest"): a JSON array of
   * `{ id, key }`, each key 32 bytes in base64; the first seals, every one opens. Unset: values are stored as given.
   */
  EDGEQUEUE_ENCRYPTION_KEYS?: string;
  /** Signs completion callbacks (docs/http-api.md "Completion callbacks"); an enqueue with a callback is refused without it. */
  EDGEQUEUE_CALLBACK_SECRET?: string;
  /** The OTLP/HTTP endpoint spans are exported to (docs/operating.md "OpenTelemetry"); the config's `otel.endpoint` wins. */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  /** Headers for the export, `k=v,k2=v2` (the OpenTelemetry convention), e.g. an API key. */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  /** The queue config, an object in wrangler.toml `[vars.EDGEQUEUE_CONFIG]` (or a JSON string). */
  EDGEQUEUE_CONFIG?: unknown;
}

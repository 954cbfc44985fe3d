/**
 * The version of the code that runs a job's attempt, as the handler reports it with each outcome: the Worker's
 * version metadata where it is bound (`[version_metadata] binding = "CF_VERSION_METADATA"`, Cloudflare's name for
 * it), else the `version` the handlers were given. The queue keeps it with the attempt's end, so the timeline shows
 * which code ran which attempt during a deploy or a gradual deployment (docs/deploy.md "Code that changes under
 * running jobs").
 *
 * @module
 */

/** The env binding read for the Worker's version metadata. */
export const VERSION_METADATA_BINDING = "CF_VERSION_METADATA";

/** codeVersion: the bound version metadata's id (with its tag, when it has one), else `configured`, else none. */
export function codeVersion(env: unknown, configured: string | undefined): string | undefined {
  const meta = env !== null && typeof env === "object" ? (env as Record<string, unknown>)[VERSION_METADATA_BINDING] : undefined;
  if (meta !== null && typeof meta === "object") {
    const { id, tag } = meta as { id?: unknown; tag?: unknown };
    if (typeof id === "string" && id.length > 0) return typeof tag === "string" && tag.length > 0 ? `${tag} (${id})` : id;
  }
  return configured !== undefined && configured.length > 0 ? configured : undefined;
}

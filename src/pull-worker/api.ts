/**
 * The pull worker's calls to the queue's HTTP API (docs/http-api.md): JSON with
 * the bearer token, a refusal thrown as ApiError (pull-worker/answers.ts).
 *
 * @module
 */
import { ApiError } from "./answers";

export interface CallOptions {
  /** Ends the call at any moment; an answer it cuts off is lost. */
  signal?: AbortSignal;
  /**
   * Ends the call only while the queue has not begun to answer: once the answer's status is in, it is read to its
   * end. A claim the queue answered has leased its jobs, and the worker must see them to give them back
   * (docs/pull-workers.md "Pull workers", Shutdown).
   */
  untilAnswered?: AbortSignal;
}

export type Call = <T>(method: string, path: string, body?: unknown, options?: CallOptions) => Promise<T>;

export const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;

/** queueCall: calls to the queue at `root` (no trailing slash) through `doFetch`. */
export function queueCall(root: string, token: string, doFetch: typeof fetch): Call {
  return async <T>(method: string, path: string, body?: unknown, { signal, untilAnswered }: CallOptions = {}): Promise<T> => {
    const ends = signal || untilAnswered ? new AbortController() : null;
    const link = (from: AbortSignal | undefined) => {
      if (!from) return () => {};
      const cut = () => ends!.abort(from.reason);
      if (from.aborted) cut();
      else from.addEventListener("abort", cut, { once: true });
      return () => from.removeEventListener("abort", cut);
    };
    const unlinkSignal = link(signal);
    const unlinkUnanswered = link(untilAnswered);
    try {
      const res = await doFetch(`${root}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: ends?.signal,
      }).then((r) => (unlinkUnanswered(), r)); // the moment the status is in, not a turn later
      const text = await res.text();
      const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      if (!res.ok) {
        const e = (parsed as { error?: { code: string; message: string; details?: unknown } }).error;
        throw new ApiError(res.status, e?.code ?? "internal", e?.message ?? `HTTP ${res.status}`, e?.details);
      }
      return parsed as T;
    } finally {
      unlinkSignal();
      unlinkUnanswered();
    }
  };
}

/**
 * QueueClientError: a refusal from the queue, as the typed clients throw it,
 * with the API's stable `code` (`invalid_request`, `not_found`, `conflict`…).
 *
 * @module
 */
export class QueueClientError extends Error {
  override readonly name = "QueueClientError";
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly status?: number,
  ) {
    super(message);
  }
}

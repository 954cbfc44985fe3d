/**
 * What a sensitive value reads as to everyone but its handler (docs/operating.md "Sensitive values"). A module of
 * its own: the handler SDK prints it without taking in the queue's sealing.
 *
 * @module
 */
export const REDACTED = "[redacted]";

/**
 * `edgequeue keys new <id>` (docs/operating.md "Encryption at rest"): a new random key and the
 * EDGEQUEUE_ENCRYPTION_KEYS entry that holds it, made here with no call to the queue. A new key goes first in the
 * secret's array (it seals); the old ones stay after it (they open what they sealed).
 *
 * @module
 */
import type { Command } from "commander";
import { KEYS_SECRET, newKey } from "../sealing/keys";
import { UsageError } from "./output";

export function keysCommand(program: Command, out: (s: string) => void): void {
  const keys = program.command("keys").description(`keys that seal stored values (${KEYS_SECRET})`);
  keys
    .command("new <id>")
    .description(`a new random 32-byte key as a ${KEYS_SECRET} entry; nothing is sent anywhere`)
    .action((id: string) => {
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new UsageError(`<id>: "${id}" is not 1-32 characters of A-Z a-z 0-9 _ -`);
      const entry = newKey(id);
      out(
        `${KEYS_SECRET} entry (put it first in the JSON array, keep older keys after it: npx wrangler secret put ${KEYS_SECRET}):\n` +
          `  ${JSON.stringify(entry)}\n` +
          `A key that is lost leaves what it sealed unreadable: keep a copy where your other secrets are kept.\n`,
      );
    });
}

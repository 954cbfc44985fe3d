/**
 * Random hex for ids and lease tokens. A batch makes an id per job, and a
 * `getRandomValues` call plus a per-byte `toString(16)` each, with the home's
 * base64url made again for every id (home.ts), were ~7% of the coordinator's
 * time in 1,000-job batches (CPU profiles of the same batches before and
 * after: `prepareJob` went from 10.5% to 3%): bytes are drawn from the CSPRNG 4 KiB at a time (each used once) and
 * turned to hex through a table.
 *
 * @module
 */

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
const POOL = new Uint8Array(4096);
/** Filled on first use: Workers allow no randomness at startup. */
let used = POOL.length;

/** randomHex: `bytes` random bytes as 2 × bytes lowercase hex characters. */
export function randomHex(bytes: number): string {
  let hex = "";
  for (let i = 0; i < bytes; i++) {
    if (used === POOL.length) {
      crypto.getRandomValues(POOL);
      used = 0;
    }
    hex += HEX[POOL[used++]!]!;
  }
  return hex;
}

// The queue's config (edgequeue's docs/configuration.md lists every setting). `npx edgequeue check` validates it
// offline with the messages the Worker gives at startup. Types with a handler in src/handlers.ts are pushed to it.
import { defineConfig } from "edgequeue";

export default defineConfig({
  types: {
    "welcome.email": { maxAttempts: 5, backoff: { baseMs: 1_000 } },
    "order.fulfil": { timeoutMs: 60_000 },
  },
});

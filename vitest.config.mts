import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      // The real coordinator: same wrangler.toml, real Durable Objects and SQLite.
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          QUEUE_TOKEN: "test-token",
          EDGEQUEUE_CONFIG: {
            types: {
              "sharded.job": { shards: 4 },
              "quick.retry": { maxAttempts: 2, backoff: { baseMs: 100, maxMs: 1000 } },
            },
          },
        },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
  },
});

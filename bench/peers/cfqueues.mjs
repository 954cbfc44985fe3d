// Cloudflare Queues on the same local runtime as edgequeue (wrangler dev's miniflare and workerd,
// bench/cfq): a producer Worker that sends what it is posted (sendBatch, 100 a call) and a no-op
// consumer taking batches of up to 100 as soon as they are there (max_batch_timeout = 0).
import { call, cfqDrain, until } from "../lib.mjs";

export function openCfQueues(url) {
  let probes = 0;
  return {
    name: "cf-queues",
    enqueue: (i) => call(url, "POST", "/send", { messages: [{ i, to: "someone@example.com" }] }),
    enqueueBatch: (b, size) => call(url, "POST", "/send", { messages: Array.from({ length: size }, (_, i) => ({ b, i, to: "someone@example.com" })) }),
    drains: {
      // As edgequeue's push drain: from the first send to the last batch consumed.
      "queue() consumer, batches of 100": (n) => cfqDrain(url, n),
    },
    submit: async ({ delayMs = 0 } = {}) => {
      const probe = `p${probes++}-${Date.now()}`;
      // A delay is whole seconds here (delaySeconds).
      await call(url, "POST", "/send", { messages: [{ probe }], ...(delayMs ? { delaySeconds: Math.ceil(delayMs / 1000) } : {}) });
      return { started: () => until(`message ${probe}`, async () => (await call(url, "GET", `/started?probe=${probe}`)).at, 30_000) };
    },
    close: async () => {},
  };
}

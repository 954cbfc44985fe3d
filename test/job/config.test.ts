import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/load";

describe("config", () => {
  it("fills defaults", () => {
    const c = parseConfig(undefined);
    expect(c.typeSettings("any")).toEqual({ shards: 1, maxAttempts: 3, backoff: { baseMs: 1000, maxMs: 300_000 } });
    expect(c.limits.payloadMaxBytes).toBe(131_072);
    expect(c.retention.failedMs).toBe(7 * 86_400_000);
  });

  it("merges type settings over defaults, and accepts a JSON string", () => {
    const c = parseConfig('{"defaults":{"maxAttempts":5},"types":{"email.send":{"shards":4,"backoff":{"baseMs":200}}}}');
    expect(c.typeSettings("email.send")).toEqual({ shards: 4, maxAttempts: 5, backoff: { baseMs: 200, maxMs: 300_000 } });
    expect(c.typeSettings("toString").shards).toBe(1);
  });

  it("refuses bad config with every problem named by path", () => {
    let message = "";
    try {
      parseConfig({ types: { "email.send": { shards: 0, maxAttempt: 3 } }, limits: { payloadMaxBytes: "big" } });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain("Invalid EDGEQUEUE_CONFIG in wrangler.toml");
    expect(message).toContain('EDGEQUEUE_CONFIG.types["email.send"].shards');
    expect(message).toContain('EDGEQUEUE_CONFIG.types["email.send"]: Unrecognized key: "maxAttempt"');
    expect(message).toContain("EDGEQUEUE_CONFIG.limits.payloadMaxBytes");
    expect(() => parseConfig("{oops")).toThrow(/EDGEQUEUE_CONFIG is not valid JSON/);
  });
});

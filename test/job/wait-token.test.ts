/**
 * Wait tokens (src/job/wait-token.ts; docs/workflows.md "Wait tokens"): a token's `url` is its path on the queue's
 * `publicUrl` (a trailing slash dropped), null without one; its signature holds under the QUEUE_TOKEN that made it
 * and no other; a config's publicUrl must be http(s), named when it is not.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load";
import { makeToken, parseToken, tokenIsSigned } from "../../src/job/wait-token";

const parts = { jobId: "c2NvcGU6QTpi.j1", name: "approval", expiresAt: 1_900_000_000_000, jobCreatedAt: 1_800_000_000_000 };

describe("a wait token", () => {
  it("has a url on publicUrl, and none without it", async () => {
    const publicUrl = parseConfig({ publicUrl: "https://queue.example.com/" }).publicUrl;
    expect(publicUrl).toBe("https://queue.example.com");
    const t = await makeToken("secret", parts, publicUrl);
    expect(t).toMatchObject({ name: "approval", path: `/v1/tokens/${t.id}`, url: `https://queue.example.com/v1/tokens/${t.id}`, expiresAt: parts.expiresAt });
    expect((await makeToken("secret", parts, null)).url).toBeNull();
    expect(() => parseConfig({ publicUrl: "ftp://queue.example.com" })).toThrow(/publicUrl/);
  });

  it("is signed under the QUEUE_TOKEN that made it, and no other", async () => {
    const t = await makeToken("secret", parts, null);
    const parsed = parseToken(t.id)!;
    expect(parsed).toMatchObject(parts);
    expect(await tokenIsSigned("secret", parsed)).toBe(true);
    expect(await tokenIsSigned("rotated", parsed)).toBe(false);
    expect(await tokenIsSigned("secret", { ...parsed, expiresAt: parts.expiresAt + 1 })).toBe(false);
  });
});

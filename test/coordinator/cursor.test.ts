/** Opaque tokens: cursors and job ids carry any text, UTF-8 included, and refuse what they did not make. */
import { describe, expect, it } from "vitest";
import { decodeText, encodeText } from "../../src/base64url";
import { decodeCursor, encodeCursor, packJson, unpackJson } from "../../src/coordinator/cursor";
import { homeOfJobId, jobIdFor, typeHome } from "../../src/job/home";

describe("opaque tokens", () => {
  it("round-trip non-Latin-1 text (btoa alone would throw)", () => {
    expect(unpackJson(packJson({ c: "メール.送信", k: null }))).toEqual({ c: "メール.送信", k: null });
    expect(decodeCursor(encodeCursor({ h: "scope:Tenant:é", s: 3 }))).toEqual({ h: "scope:Tenant:é", s: 3 });
    const home = typeHome("メール", 0).name;
    expect(homeOfJobId(jobIdFor(home, "x1"))?.name).toBe(home);
    expect(encodeText("a?b/c+d")).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("refuse text that is not base64url of UTF-8", () => {
    expect(decodeText("a+b")).toBeNull();
    expect(decodeText("_w")).toBeNull(); // 0xff alone is not UTF-8
    expect(() => decodeCursor("@@")).toThrow(/cursor/);
    expect(homeOfJobId("!!.x")).toBeNull();
  });
});

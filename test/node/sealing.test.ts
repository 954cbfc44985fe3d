/**
 * The seal and the lens alone (src/sealing/; docs/operating.md "Encryption at rest", "Sensitive values"): a value
 * sealed once, opened by any listed key, refused when changed; a sensitive step's mark shown redacted to a reader and
 * opened for its handler, sealed or not; values the queue wraps around sealed ones opened where they sit.
 */
import { describe, expect, it } from "vitest";
import { parseKeys } from "../../src/sealing/keys";
import { Lens, markSensitive, REDACTED } from "../../src/sealing/lens";
import { NO_KEYS, SealError, Vault } from "../../src/sealing/vault";

const key = (id: string, fill: number) => ({ id, key: btoa(String.fromCharCode(...new Uint8Array(32).fill(fill))) });
const vault = (...keys: { id: string; key: string }[]) => new Vault(parseKeys(JSON.stringify(keys)));

describe("the seal", () => {
  it("seals once, with the first key; every listed key opens; a changed byte or an unlisted key is refused by name", () => {
    const v = vault(key("new", 2), key("old", 1));
    const sealed = v.sealText('{"card":"4242"}');
    expect(sealed).toMatch(/^"\$sealed:v1:new:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+"$/);
    expect(sealed).not.toContain("4242");
    expect(v.sealText(sealed)).toBe(sealed);
    expect(v.sealText('{"card":"4242"}')).not.toBe(sealed); // a fresh iv each time
    expect(v.openString(JSON.parse(vault(key("old", 1)).sealText("[1,2]")))).toBe("[1,2]");
    const s = JSON.parse(sealed) as string;
    const changed = `${s.slice(0, -2)}${s.at(-2) === "A" ? "B" : "A"}${s.at(-1)}`;
    expect(() => v.openString(changed)).toThrow(SealError);
    expect(() => vault(key("other", 3)).openString(s)).toThrow(/sealed with key "new", which EDGEQUEUE_ENCRYPTION_KEYS does not list/);
    expect(NO_KEYS.sealText("{}")).toBe("{}");
    expect(v.sealString("a line")).toMatch(/^\$sealed:v1:new:/);
  });
});

describe("the lens", () => {
  const sealing = new Lens(vault(key("k", 5)), new Set(["pay.charge"]));
  const plain = new Lens(NO_KEYS, new Set(["pay.charge"]));

  it("opens for a handler and for a reader; redacts a sensitive type's values and a sensitive step's for a reader only", () => {
    for (const lens of [sealing, plain]) {
      const payload = lens.seal('{"card":"4242"}');
      expect(lens.show(payload, "pay.receipt")).toEqual({ card: "4242" });
      expect(lens.show(payload, "pay.charge")).toBe(REDACTED);
      expect(JSON.parse(lens.handlerText(payload))).toEqual({ card: "4242" });
      const step = lens.seal(markSensitive('{"otp":"123"}'));
      expect(lens.show(step, "pay.receipt")).toBe(REDACTED);
      expect(lens.handlerText(step)).toBe('{"otp":"123"}');
    }
  });

  it("finds sealed values where the queue wrapped them: a signal's data, a child's result", () => {
    const data = sealing.seal('{"approved":true}');
    const wait = `{"data":${data}}`;
    expect(wait).not.toContain("approved");
    expect(sealing.show(wait, "flow")).toEqual({ data: { approved: true } });
    const child = JSON.stringify({ child: "c1", state: "completed", result: JSON.parse(sealing.seal('"done"')) });
    expect(JSON.parse(sealing.handlerText(child))).toEqual({ child: "c1", state: "completed", result: "done" });
  });

  it("a reader is told of a value it cannot open; a handler is refused it", () => {
    const lost = vault(key("gone", 9)).sealText('{"a":1}');
    expect(sealing.show(lost, "x")).toMatch(/^\[sealed: a value sealed with key "gone"/);
    expect(() => sealing.handlerText(lost)).toThrow(SealError);
  });
});

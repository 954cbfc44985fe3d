/**
 * The seal and the lens alone (src/sealing/; docs/operating.md "Encryption at rest", "Sensitive values"): a value
 * sealed once, opened by any listed key, refused when changed; a sensitive step's mark shown redacted to a reader and
 * opened for its handler, sealed or not; values the queue wraps around sealed ones opened where they sit.
 */
import { describe, expect, it } from "vitest";
import { parseKeys } from "../../src/sealing/keys";
import { Lens, markSensitive, REDACTED } from "../../src/sealing/lens";
import { NO_KEYS, plainBytes, SealError, Vault } from "../../src/sealing/vault";

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

  it("the native and the synchronous AES-GCM open each other's values", async () => {
    const v = vault(key("k", 4));
    expect(v.openString(JSON.parse(await v.sealTextAsync('{"a":1}')))).toBe('{"a":1}');
    expect(await v.openStringAsync(JSON.parse(v.sealText('{"b":2}')))).toBe('{"b":2}');
    await expect(vault(key("other", 3)).openStringAsync(JSON.parse(v.sealText("1")))).rejects.toThrow(SealError);
  });
});

describe("the lens", () => {
  const sealing = new Lens(vault(key("k", 5)), new Set(["pay.charge"]));
  const plain = new Lens(NO_KEYS, new Set(["pay.charge"]));

  it("in the object a view redacts a sensitive type's values and a sensitive step's, and leaves sealed ones sealed; they open where the view leaves", async () => {
    for (const lens of [sealing, plain]) {
      const payload = lens.seal('{"card":"4242"}');
      const shown = lens.show(payload, "pay.receipt");
      expect(await lens.openDeep(shown, "reader")).toEqual({ card: "4242" });
      expect(lens.openSync(shown, "reader")).toEqual({ card: "4242" });
      expect(lens.show(payload, "pay.charge")).toBe(REDACTED);
      expect(JSON.parse(await lens.openDeep(lens.handlerText(payload), "handler"))).toEqual({ card: "4242" });
      const step = markSensitive(lens.seal('{"otp":"123"}'));
      expect(lens.show(step, "pay.receipt")).toBe(REDACTED);
      expect(await lens.openDeep(lens.handlerText(step), "handler")).toBe('{"otp":"123"}');
    }
    // Only the queue's own mark, at the top of a step's text: a user's string that looks like one is a string.
    expect(plain.show(JSON.stringify({ n: "$sensitive:v1:42" }), "x")).toEqual({ n: "$sensitive:v1:42" });
  });

  it("finds sealed values where the queue wrapped them (a signal's data, a child's result) and in JSON text (a journal entry)", async () => {
    const data = sealing.seal('{"approved":true}');
    const wait = `{"data":${data}}`;
    expect(wait).not.toContain("approved");
    expect(await sealing.openDeep(sealing.show(wait, "flow"), "reader")).toEqual({ data: { approved: true } });
    const child = JSON.stringify({ child: "c1", state: "completed", result: JSON.parse(sealing.seal('"done"')) });
    expect(JSON.parse(await sealing.openDeep(child, "handler"))).toEqual({ child: "c1", state: "completed", result: "done" });
    expect(sealing.openText(child)).toBe('{"child":"c1","state":"completed","result":"done"}');
    expect(plainBytes(child, 1000)).toBe(child.length - JSON.parse(sealing.seal('"done"')).length - 2 + '"done"'.length);
  });

  it("a reader is told of a value it cannot open; a handler is refused it", async () => {
    const lost = vault(key("gone", 9)).sealText('{"a":1}');
    expect(await sealing.openDeep(sealing.show(lost, "x"), "reader")).toMatch(/^\[sealed: a value sealed with key "gone"/);
    await expect(sealing.openDeep(lost, "handler")).rejects.toThrow(SealError);
    expect(() => sealing.openSync(JSON.parse(lost), "handler")).toThrow(SealError);
  });
});

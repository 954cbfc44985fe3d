/**
 * base64url (RFC 4648 §5, no padding) over bytes and over UTF-8 text: job ids,
 * listing cursors and dashboard session tokens all travel in URLs or cookies.
 *
 * @module
 */

/** The runtime's own base64 of bytes (Uint8Array.prototype.toBase64 / Uint8Array.fromBase64), where it has it. */
const native = Uint8Array as unknown as { fromBase64?: (s: string, o: { alphabet: string }) => Uint8Array; prototype: { toBase64?: (o: { alphabet: string; omitPadding: boolean }) => string } };

export function encodeBytes(bytes: Uint8Array): string {
  if (native.prototype.toBase64) return (bytes as unknown as { toBase64: (o: { alphabet: string; omitPadding: boolean }) => string }).toBase64({ alphabet: "base64url", omitPadding: true });
  // In slices: one String.fromCharCode call per 8 KiB, not one string concatenation per byte.
  let bin = "";
  for (let i = 0; i < bytes.length; i += 8192) bin += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function encodeText(text: string): string {
  return encodeBytes(new TextEncoder().encode(text));
}

/** decodeText: the UTF-8 text, or null when `text` is not base64url of valid UTF-8. */
export function decodeText(text: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

/** decodeBytes: the bytes of base64url (or standard base64, padded or not), or null when `text` is neither. */
export function decodeBytes(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_\-+/]*={0,2}$/.test(text)) return null;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, ""));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

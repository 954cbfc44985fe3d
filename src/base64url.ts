/**
 * base64url (RFC 4648 §5, no padding) over bytes and over UTF-8 text: job ids,
 * listing cursors and dashboard session tokens all travel in URLs or cookies.
 *
 * @module
 */

export function encodeBytes(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
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
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

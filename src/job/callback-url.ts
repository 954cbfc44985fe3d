/**
 * Which completion-callback URLs the queue calls (docs/http-api.md "Completion callbacks", "Where a callback may
 * go"). A callback is a request the queue makes on a caller's say-so, so a URL that points back inside a network —
 * loopback, the unspecified address, private, shared, link-local, reserved or multicast ranges, IPv4 inside IPv6, a
 * name that only means something on one machine or one network — is refused at the enqueue, before anything is
 * written, unless the config's `callbacks.allowHosts` names its host (local development). The URL parser is the
 * runtime's own (WHATWG), the one the request is later made with, so `http://2130706433/`, `http://0x7f.1/` and
 * `http://0177.0.0.1/` are all read as the 127.0.0.1 they reach.
 *
 * Names are not resolved: a public name that resolves to a private address is the resolver's business (from a
 * deployed Worker, Cloudflare's network makes the request, not the Worker's own host).
 *
 * @module
 */

import type { TerminalState } from "./states";

/** Callbacks call back on these end states unless the enqueue says otherwise. */
export const CALLBACK_ON_DEFAULT: readonly TerminalState[] = ["completed", "failed"];

/** A callback URL's most characters. */
export const CALLBACK_URL_MAX = 2048;

/** Name suffixes that only mean something inside one machine or one network. */
const LOCAL_SUFFIXES = ["localhost", "local", "internal", "intranet", "lan", "home.arpa", "localdomain", "corp"];

/** IPv4 ranges a callback may not reach: [first octets as a number, prefix length]. */
const V4_REFUSED: readonly [string, number][] = [
  ["0.0.0.0", 8], // "this network", the unspecified address
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // shared address space (carrier NAT)
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata services
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

function v4Number(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

function v4Refused(n: number): boolean {
  return V4_REFUSED.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    return Math.floor(n / size) === Math.floor(v4Number(base)! / size);
  });
}

/** v6Words: an IPv6 address's eight 16-bit words (the URL parser gives it compressed, lowercase, without a zone). */
function v6Words(text: string): number[] | null {
  let head = text;
  // A trailing dotted IPv4 part (the parser writes these in hex, but be exact either way) is two words.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4Number(dotted[2]!);
    if (n === null) return null;
    head = `${dotted[1]!}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const words = (s: string) => (s === "" ? [] : s.split(":").map((w) => (/^[0-9a-f]{1,4}$/i.test(w) ? parseInt(w, 16) : NaN)));
  const left = words(halves[0]!);
  const right = halves.length === 2 ? words(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - left.length - right.length : 0;
  if (fill < 0) return null;
  const all = [...left, ...Array<number>(fill).fill(0), ...right];
  return all.length === 8 && all.every((w) => Number.isInteger(w)) ? all : null;
}

function v6Refused(w: number[]): boolean {
  const v4At = (i: number) => w[i]! * 65536 + w[i + 1]!;
  const zeros = (n: number) => w.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return true; // ::
  if (zeros(7) && w[7] === 1) return true; // ::1
  if (zeros(5) && w[5] === 0xffff) return true; // IPv4-mapped: always an IPv4 host reached over IPv6; say it in IPv4
  if (zeros(6)) return true; // IPv4-compatible (deprecated)
  if (w[0] === 0x64 && w[1] === 0xff9b) return v4Refused(v4At(6)); // NAT64 well-known prefix
  if (w[0] === 0x2002) return v4Refused(v4At(1)); // 6to4
  if (w[0] === 0x2001 && w[1] === 0x0db8) return true; // documentation
  if (w[0] === 0x0100 && w[1] === 0 && w[2] === 0 && w[3] === 0) return true; // discard-only 100::/64
  const top = w[0]!;
  if ((top & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((top & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((top & 0xffc0) === 0xfec0) return true; // site-local (deprecated)
  if ((top & 0xff00) === 0xff00) return true; // multicast
  return (top & 0xe000) !== 0x2000; // only global unicast (2000::/3) is public
}

/** The form a callback URL must have: http(s), then an authority — the parser would read `http:///x` as host `x`. */
export const CALLBACK_URL_FORM = "must be an http(s) URL with a host: http(s)://host/path";

/** hasHttpHost: `raw` is an http(s) URL whose authority follows the scheme, and parses. */
export function hasHttpHost(raw: string): boolean {
  if (!/^https?:\/\/[^/?#\\\s]/i.test(raw)) return false;
  try {
    return new URL(raw) !== null;
  } catch {
    return false;
  }
}

/**
 * callbackUrlProblem: why the queue refuses to call `raw`, or null when it may. `allowHosts`: hosts
 * (`name`, `name:port`, an IP literal, `[v6]:port`) let through though private (config `callbacks.allowHosts`).
 */
export function callbackUrlProblem(raw: string, allowHosts: readonly string[]): string | null {
  if (raw.length > CALLBACK_URL_MAX) return `is ${raw.length} characters; at most ${CALLBACK_URL_MAX}`;
  if (!hasHttpHost(raw)) return CALLBACK_URL_FORM;
  const url = new URL(raw);
  if (url.username !== "" || url.password !== "") return "must not carry credentials (user:password@): the callback is signed instead";
  const host = url.hostname.toLowerCase();
  const allowed = new Set(allowHosts.map((h) => h.toLowerCase()));
  if (allowed.has(host) || allowed.has(url.host.toLowerCase())) return null;
  const hint = " (callbacks.allowHosts in the config lets a host through, for local development)";
  if (host.startsWith("[")) {
    const words = v6Words(host.slice(1, -1));
    if (words === null || v6Refused(words)) return `points at ${host}, a loopback, private, link-local, reserved or IPv4-mapped IPv6 address${hint}`;
    return null;
  }
  const v4 = v4Number(host);
  if (v4 !== null) return v4Refused(v4) ? `points at ${host}, a loopback, private, link-local or reserved address${hint}` : null;
  const name = host.replace(/\.$/, "");
  if (!name.includes(".")) return `names the host ${host}, which has no domain: give a public host name${hint}`;
  const local = LOCAL_SUFFIXES.find((s) => name === s || name.endsWith(`.${s}`));
  if (local !== undefined) return `names the host ${host}, which is local to one machine or network (.${local})${hint}`;
  return null;
}

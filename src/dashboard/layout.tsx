/** @jsxImportSource hono/jsx */
/**
 * The page frame: navigation, sign-out, the notice or error banner, and the
 * footer that says when the live parts were last refreshed.
 *
 * @module
 */
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import { REFRESH_MS } from "./assets";
import { CSRF_FIELD } from "./session";
import { utc } from "./format";

export const NAV = [
  ["", "Overview"],
  ["jobs", "Jobs"],
  ["scopes", "Scopes"],
  ["pools", "Pools"],
  ["schedules", "Schedules"],
  ["topics", "Topics"],
  ["errors", "Errors"],
] as const;

export interface PageFrame {
  title: string;
  /** The NAV entry to highlight. */
  section: (typeof NAV)[number][0];
  csrf: string;
  now: number;
  notice?: string | null;
  error?: string | null;
  /**
   * Subscription paths (docs/http-api.md "Live subscriptions") the page opens as WebSockets: a message refreshes
   * its live parts at once, instead of on the timer (dashboard/live.ts).
   */
  subscribe?: string[];
  /** The signed-in token: shown in the header. */
  who?: { name: string; role: string };
  /** Whether its role may act (pause, cancel, retry, rerun, …): without it the pages show no action forms. */
  canOperate?: boolean;
}

/** DOCTYPE: JSX cannot write it, and without it browsers render in quirks mode. */
export const DOCTYPE = raw("<!DOCTYPE html>");

/** Head: every page's; `live` adds the refresh script (not on sign-in: nothing there changes). */
export function Head(props: { title: string; live?: boolean }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{props.title} · edgequeue</title>
      <link rel="icon" href="data:," />
      <link rel="stylesheet" href="/dashboard/assets/app.css" />
      {props.live ? <script src="/dashboard/assets/app.js" defer></script> : null}
    </head>
  );
}

export function Layout(props: PageFrame & { children?: Child }) {
  return (
    <>
    {DOCTYPE}
    <html lang="en">
      <Head title={props.title} live />
      <body data-subscribe={props.subscribe && props.subscribe.length > 0 ? props.subscribe.join(" ") : undefined}>
        <header>
          <a class="brand" href="/dashboard">edgequeue</a>
          <nav>
            {NAV.map(([path, label]) => (
              <a href={`/dashboard${path ? "/" + path : ""}`} class={props.section === path ? "on" : ""}>
                {label}
              </a>
            ))}
          </nav>
          {props.who ? (
            <span class="muted small" title="The token signed in with, and its role">
              {props.who.name} · {props.who.role}
            </span>
          ) : null}
          <form method="post" action="/dashboard/logout" class="inline">
            <Csrf token={props.csrf} />
            <button type="submit">Sign out</button>
          </form>
        </header>
        <main>
          <h1>{props.title}</h1>
          {props.error ? <div class="banner error" role="alert">{props.error}</div> : null}
          {props.notice ? <div class="banner notice" role="status">{props.notice}</div> : null}
          {props.children}
        </main>
        <footer id="updated" data-live>
          Updated {utc(props.now)} · {props.subscribe && props.subscribe.length > 0 ? "live" : `refreshes every ${REFRESH_MS / 1000} s`}
        </footer>
      </body>
    </html>
    </>
  );
}

/** Csrf: the hidden field every state-changing form carries. */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={props.token} />;
}

export function StateChip(props: { state: string }) {
  return <span class={`chip ${props.state}`}>{props.state}</span>;
}

/** Num: a right-aligned count, greyed when zero. */
export function Num(props: { n: number; href?: string; attrs?: Record<string, string> }) {
  const text = props.n.toLocaleString("en-US");
  return (
    <td class={`num${props.n === 0 ? " zero" : ""}`} {...(props.attrs ?? {})}>
      {props.href && props.n > 0 ? <a href={props.href}>{text}</a> : text}
    </td>
  );
}

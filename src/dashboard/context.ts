/**
 * The dashboard's request context: what its middleware puts on each request (the session, its CSRF token, the
 * parsed form) for the pages and actions (app.tsx, bulk-routes.tsx).
 *
 * @module
 */
import type { Context } from "hono";
import type { Env } from "../env";
import type { Session } from "./session";

export type Vars = { session: Session; csrf: string; form: Record<string, string> };
export type DashEnv = { Bindings: Env; Variables: Vars };
export type DashContext = Context<DashEnv>;

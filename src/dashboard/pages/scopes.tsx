/** @jsxImportSource hono/jsx */
/**
 * Scopes: the objects holding the most live jobs, busiest first — a tenant
 * flooding the queue shows at the top. Unscoped jobs live in type shards.
 *
 * @module
 */
import { parseHome } from "../../job/home";
import type { ScopeStats } from "../../job/schemas";
import { Layout, type PageFrame } from "../layout";
import { StatsTable, type StatsRowView } from "../stats-table";

export function ScopesPage(props: { frame: PageFrame; items: ScopeStats[] }) {
  return (
    <Layout {...props.frame}>
      <div class="card" id="scopes" data-live>
        <StatsTable first="Scope" empty="No jobs yet." rows={props.items.map(row)} />
      </div>
    </Layout>
  );
}

/** row: a scope links to its jobs; a type shard (that type's unscoped jobs) links to the type's. */
function row(s: ScopeStats): StatsRowView {
  const home = parseHome(s.home);
  if (s.scope) {
    return { label: `${s.scope.type}:${s.scope.id}`, stats: s, key: s.home, jobs: `/dashboard/jobs?scopeType=${encodeURIComponent(s.scope.type)}&scopeId=${encodeURIComponent(s.scope.id)}` };
  }
  if (home?.kind === "type") return { label: `${home.type} (unscoped, shard ${home.shard})`, stats: s, key: s.home, jobs: `/dashboard/jobs?type=${encodeURIComponent(home.type)}` };
  return { label: s.home, stats: s, key: s.home, jobs: null };
}

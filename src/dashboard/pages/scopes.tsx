/** @jsxImportSource hono/jsx */
/**
 * Scopes: the objects holding the most live jobs, busiest first — a tenant
 * flooding the queue shows at the top. Unscoped jobs live in type shards.
 *
 * @module
 */
import { parseHome } from "../../job/home";
import type { ScopeStats } from "../../job/schemas";
import { duration } from "../format";
import { Layout, Num, type PageFrame } from "../layout";

export function ScopesPage(props: { frame: PageFrame; items: ScopeStats[] }) {
  return (
    <Layout {...props.frame}>
      <div class="card" id="scopes" data-live>
        <table>
          <thead>
            <tr>
              <th>Scope</th>
              <th class="num">Pending</th>
              <th class="num">Scheduled</th>
              <th class="num">Running</th>
              <th class="num">Completed</th>
              <th class="num">Failed</th>
              <th class="num">Cancelled</th>
              <th class="num">Oldest pending lag</th>
            </tr>
          </thead>
          <tbody>
            {props.items.length === 0 ? (
              <tr>
                <td colspan={8} class="muted">
                  No jobs yet.
                </td>
              </tr>
            ) : (
              props.items.map((s) => {
                // A type shard holds that type's unscoped jobs: its link lists the type.
                const home = parseHome(s.home);
                const jobs = s.scope
                  ? `/dashboard/jobs?scopeType=${encodeURIComponent(s.scope.type)}&scopeId=${encodeURIComponent(s.scope.id)}`
                  : home?.kind === "type"
                    ? `/dashboard/jobs?type=${encodeURIComponent(home.type)}`
                    : null;
                const q = (state: string) => (jobs ? `${jobs}&state=${state}` : undefined);
                const label = s.scope ? `${s.scope.type}:${s.scope.id}` : home?.kind === "type" ? `${home.type} (unscoped, shard ${home.shard})` : s.home;
                return (
                  <tr>
                    <td>{jobs ? <a href={jobs}>{label}</a> : label}</td>
                    <Num n={s.pending} href={q("pending")} />
                    <Num n={s.scheduled} />
                    <Num n={s.running} href={q("running")} />
                    <Num n={s.completed} href={q("completed")} />
                    <Num n={s.failed} href={q("failed")} />
                    <Num n={s.cancelled} href={q("cancelled")} />
                    <td class="num">{s.oldestPendingLagMs === 0 ? "—" : duration(s.oldestPendingLagMs)}</td>
                  </tr>
                );
              })
            )}
          </tbody>
        </table>
      </div>
    </Layout>
  );
}

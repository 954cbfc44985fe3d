/** @jsxImportSource hono/jsx */
/**
 * Pools: each pool's limits in force, occupancy, the current rate window's
 * spend, and who is waiting (longest first, as the pool serves them).
 *
 * @module
 */
import type { PoolStatusBody } from "../../job/schemas";
import { ago } from "../format";
import { Layout, type PageFrame } from "../layout";

export function PoolsPage(props: { frame: PageFrame; pools: PoolStatusBody[] }) {
  const now = props.frame.now;
  return (
    <Layout {...props.frame}>
      <div id="pools" data-live>
        {props.pools.length === 0 ? <div class="card muted">No pools: declare them in the config, or give a type a concurrency.</div> : null}
        {props.pools.map((p) => (
          <div class="card" data-pool={p.name}>
            <h2>
              {p.name} <span class="muted small">({p.types.join(", ")})</span>
            </h2>
            <dl class="facts">
              <dt>Occupancy</dt>
              <dd>
                {p.limits.concurrency === null ? `${p.active} (no concurrency limit)` : `${p.active} of ${p.limits.concurrency}`} · {p.permits} permit
                {p.permits === 1 ? "" : "s"}
              </dd>
              <dt>Rate window</dt>
              <dd>
                {p.limits.ratePerMinute === null
                  ? "no rate limit"
                  : `${p.window.spent} of ${p.limits.ratePerMinute} per minute${p.window.start !== null ? `, window opened ${ago(p.window.start, now)}` : ""}`}
              </dd>
              <dt>Limits</dt>
              <dd>
                in force {fmt(p.limits)}; config {fmt(p.configured)}
              </dd>
              <dt>Waiting</dt>
              <dd>{p.waiting.length === 0 ? "nobody" : `${p.waiting.length}`}</dd>
              {p.keyed ? (
                <>
                  <dt>Per key value</dt>
                  <dd data-keyed>
                    <code>{p.keyed.path}</code>: {fmt(p.keyed.configured)} each · {p.keyed.busiest.total.keys} busy, {p.keyed.busiest.total.active} running
                  </dd>
                </>
              ) : null}
            </dl>
            {p.keyed && p.keyed.busiest.keys.length > 0 ? (
              <table data-busiest>
                <thead>
                  <tr>
                    <th>Key value</th>
                    <th class="num">Running</th>
                    <th class="num">Waiting</th>
                    <th>Reported</th>
                  </tr>
                </thead>
                <tbody>
                  {p.keyed.busiest.keys.map((k) => (
                    <tr>
                      <td>
                        <code>{k.key}</code>
                      </td>
                      <td class="num">{k.active}</td>
                      <td class="num">{k.waiting}</td>
                      <td>{ago(k.at, now)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
            {p.waiting.length > 0 ? (
              <table>
                <thead>
                  <tr>
                    <th>Holder</th>
                    <th>Type</th>
                    <th>Waiting since</th>
                    <th>Slot kept until</th>
                  </tr>
                </thead>
                <tbody>
                  {p.waiting.map((w) => (
                    <tr>
                      <td>{w.scope ? `${w.scope.type}:${w.scope.id}` : w.holder}</td>
                      <td>{w.type}</td>
                      <td>{ago(w.since, now)}</td>
                      <td>{w.reservedUntil === null ? "—" : ago(w.reservedUntil, now)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </div>
        ))}
      </div>
    </Layout>
  );
}

function fmt(l: { concurrency: number | null; ratePerMinute: number | null; rate?: { limit: number; periodMs: number; burst: number } | null }): string {
  const rate = l.rate ? `${l.rate.limit} per ${l.rate.periodMs} ms${l.rate.burst > 1 ? ` (burst ${l.rate.burst})` : ""}` : null;
  const parts = [l.concurrency === null ? null : `concurrency ${l.concurrency}`, l.ratePerMinute === null ? null : `${l.ratePerMinute}/min`, rate].filter(Boolean);
  return parts.length ? parts.join(", ") : "none";
}

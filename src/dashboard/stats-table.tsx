/** @jsxImportSource hono/jsx */
/**
 * The counts table the overview (a row per job type) and the scopes page (a
 * row per object) share: each state's count, linked to the jobs it counts,
 * failures by kind, and the oldest pending lag, highlighted when it alerts.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { Stats } from "../job/schemas";
import { FAILURE_KINDS } from "../job/states";
import { duration } from "./format";
import { Num } from "./layout";

export interface StatsRowView {
  label: Child;
  stats: Stats;
  /** The jobs page listing this row's jobs (a query string; `&state=` is appended per column), or null. */
  jobs: string | null;
  /** Marks the row's cells (`data-row`, `data-col`) so they can be found on the page. */
  key: string;
  alert?: boolean;
  /** A last cell (the overview's pause button), under the table's `actionHead`. */
  action?: Child;
}

/** breakable: a name that may wrap after its dots and colons (`billing.invoice.send`, `Account:42`) rather than mid-word. */
function breakable(label: Child): Child {
  if (typeof label !== "string") return label;
  return label.split(/(?<=[.:])/).map((part, i) => (i === 0 ? part : <><wbr />{part}</>));
}

export function StatsTable(props: { first: string; rows: StatsRowView[]; empty: string; actionHead?: string }) {
  const columns = props.actionHead === undefined ? 11 : 12;
  return (
    <table class="stats">
      <thead>
        <tr>
          <th>{props.first}</th>
          <th class="num">Pending</th>
          <th class="num">Scheduled</th>
          <th class="num">Running</th>
          <th class="num">Waiting</th>
          <th class="num">Completed</th>
          <th class="num">Failed</th>
          <th>By kind</th>
          <th class="num">Cancelled</th>
          <th class="num">Superseded</th>
          <th class="num">Expired</th>
          <th class="num">Oldest pending lag</th>
          {props.actionHead === undefined ? null : <th class="action">{props.actionHead}</th>}
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 ? (
          <tr>
            <td colspan={columns} class="muted">
              {props.empty}
            </td>
          </tr>
        ) : (
          props.rows.map(({ label, stats: s, jobs, key, alert, action }) => {
            const cell = (col: string) => ({ "data-row": key, "data-col": col });
            const of = (state: string) => (jobs ? `${jobs}&state=${state}` : undefined);
            return (
              <tr class={alert ? "lag-alert" : ""}>
                <td class="label">{jobs ? <a href={jobs}>{breakable(label)}</a> : breakable(label)}</td>
                <Num n={s.pending} href={of("pending")} attrs={cell("pending")} />
                <Num n={s.scheduled} attrs={cell("scheduled")} />
                <Num n={s.running} href={of("running")} attrs={cell("running")} />
                <Num n={s.waiting} href={of("waiting")} attrs={cell("waiting")} />
                <Num n={s.completed} href={of("completed")} attrs={cell("completed")} />
                <Num n={s.failed} href={of("failed")} attrs={cell("failed")} />
                <td class="kinds" {...cell("kinds")}>
                  {FAILURE_KINDS.filter((k) => s.failedByKind[k] > 0)
                    .map((k) => `${k.replace("_", " ")} ${s.failedByKind[k]}`)
                    .join(" · ")}
                </td>
                <Num n={s.cancelled} href={of("cancelled")} attrs={cell("cancelled")} />
                <Num n={s.superseded} href={of("superseded")} attrs={cell("superseded")} />
                <Num n={s.expired} href={of("expired")} attrs={cell("expired")} />
                <td class={`num${alert ? " alert" : s.oldestPendingLagMs === 0 ? " zero" : ""}`} {...cell("lag")}>
                  {s.oldestPendingLagMs === 0 ? "—" : duration(s.oldestPendingLagMs)}
                </td>
                {props.actionHead === undefined ? null : <td class="action" {...cell("action")}>{action}</td>}
              </tr>
            );
          })
        )}
      </tbody>
    </table>
  );
}

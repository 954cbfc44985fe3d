/** @jsxImportSource hono/jsx */
/**
 * Bulk actions by filter, from the jobs list (docs/operating.md "Dashboard and metrics"): the card that offers
 * them for the list's current filter, and the confirmation page that says how many jobs the action would act on
 * (a dry run) before anything changes.
 *
 * @module
 */
import type { BulkAction } from "../../job/transitions";
import { BULK_ACTS_ON } from "../../job/transitions";
import { Csrf, Layout, type PageFrame } from "../layout";

/** The list's filter as the forms carry it: each field as the jobs list's query has it (lists comma-separated). */
export type FilterFields = Partial<Record<"type" | "state" | "scopeType" | "scopeId" | "tag", string>>;

function Hidden(props: { fields: FilterFields }) {
  return (
    <>
      {Object.entries(props.fields).map(([k, v]) => (v ? <input type="hidden" name={k} value={v} /> : null))}
    </>
  );
}

/** describe: the filter in words, for the card and the confirmation. */
export function describeFilter(f: FilterFields): string {
  const parts = [f.type ? `of type ${f.type}` : "of every type", f.state ? `in state ${f.state}` : null, f.scopeType && f.scopeId ? `in scope ${f.scopeType}:${f.scopeId}` : null, f.tag ? `tagged ${f.tag}` : null];
  return parts.filter((p) => p !== null).join(", ");
}

const VERB: Record<BulkAction, { button: string; does: string }> = {
  cancel: { button: "Cancel matching…", does: "cancelled (running ones aborted, their children cancelled)" },
  retry: { button: "Retry matching…", does: "sent back to pending, due now, attempts 0" },
  rerun: { button: "Rerun matching…", does: "rerun from their start, each as a new job linked to it" },
};

const ACT: Record<BulkAction, string> = { cancel: "Cancel", retry: "Retry", rerun: "Rerun" };

/** BulkCard: the jobs list's offer of both actions for its current filter; each asks for a confirmation first. */
export function BulkCard(props: { csrf: string; fields: FilterFields }) {
  return (
    <div class="card">
      <h2>Act on this filter</h2>
      <p class="muted small">
        Every job {describeFilter(props.fields)}: cancel the {BULK_ACTS_ON.cancel.join(", ")} ones, retry the {BULK_ACTS_ON.retry.join(", ")} ones, or rerun the finished
        ones as new jobs. You see how many first.
      </p>
      {(["cancel", "retry", "rerun"] as const).map((action) => (
        <form method="post" action="/dashboard/bulk/confirm" class="inline">
          <Csrf token={props.csrf} />
          <Hidden fields={props.fields} />
          <input type="hidden" name="action" value={action} />
          <button type="submit" class={action === "cancel" ? "danger" : undefined} data-bulk={action}>
            {VERB[action].button}
          </button>
        </form>
      ))}
    </div>
  );
}

/** BulkConfirmPage: how many jobs the action would act on, and the button that does it. */
export function BulkConfirmPage(props: { frame: PageFrame; action: BulkAction; fields: FilterFields; count: number; more: boolean; back: string }) {
  const { action, count } = props;
  return (
    <Layout {...props.frame}>
      <div class="card">
        <p>
          <strong data-bulk-count={count}>
            {props.more ? "More than " : ""}
            {count.toLocaleString("en-US")} job{count === 1 ? "" : "s"}
          </strong>{" "}
          {describeFilter(props.fields)} will be {VERB[action].does}.
        </p>
        {count === 0 ? (
          <p class="muted">Nothing to do.</p>
        ) : (
          <form method="post" action="/dashboard/bulk/run" class="inline">
            <Csrf token={props.frame.csrf} />
            <Hidden fields={props.fields} />
            <input type="hidden" name="action" value={action} />
            <button type="submit" class={action === "cancel" ? "danger" : undefined}>
              {ACT[action]} {props.more ? "them" : count === 1 ? "it" : `all ${count}`}
            </button>
          </form>
        )}{" "}
        <a href={props.back}>back to the list</a>
      </div>
    </Layout>
  );
}

/**
 * A Cloudflare Workflows class run as an edgequeue type (docs/coming-from/workflows.md): written as for Workflows,
 * with its import from `edgequeue/workflows`. `demo.workflow`: two `step.do`s (the second with Workflows' retry and
 * timeout config), a one-second `step.sleep`, and a `step.waitForEvent("approval", { type: "approval" })` —
 * `sendEvent({ type: "approval", payload })` on its instance, or `POST /v1/jobs/{id}/signals/approval` — returning
 * its steps' results and the event's payload.
 */
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "edgequeue/workflows";

type Params = { orderId?: string; items?: number };

export class DemoWorkflow extends WorkflowEntrypoint<unknown, Params> {
  async run(event: WorkflowEvent<Params>, step: WorkflowStep) {
    const order = await step.do("fetch the order", async () => ({ orderId: event.payload.orderId ?? "order-1", items: event.payload.items ?? 2 }));
    const priced = await step.do("price it", { retries: { limit: 2, delay: "1 second", backoff: "constant" }, timeout: "30 seconds" }, async () => ({ total: order.items * 10 }));
    await step.sleep("cool off", "1 second");
    const approval = await step.waitForEvent<{ approved: boolean; by?: string }>("approval", { type: "approval", timeout: "1 hour" });
    return { order, priced, approval: approval.payload };
  }
}

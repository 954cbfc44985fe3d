// The handlers this Worker runs. Each gets (payload, ctx); what it returns is the job's result, and a throw is
// retried with backoff (RetryableJobError / TerminalJobError from edgequeue/handler say otherwise).
import type { Handlers } from "edgequeue/handler";
import "./jobs";

export const handlers = {
  "welcome.email": async (payload, ctx) => {
    ctx.log("sending the welcome email", { to: payload.to });
    return { sentTo: payload.to };
  },
  // Durable steps: a retry resumes after the last step that finished; each step runs once.
  "order.fulfil": async (payload, ctx) => {
    const reservation = await ctx.step("reserve", () => `reservation-${payload.orderId}`);
    const charge = await ctx.step("charge", ({ idempotencyKey }) => `charge-${idempotencyKey}`);
    return { reservation, charge };
  },
} satisfies Handlers;

/**
 * Type-level checks of the job-type registry (compiled by `npm run check`,
 * never bundled): with `JobTypes` augmented in index.ts, both ends are typed.
 */
import { createClient, type QueueBinding } from "edgequeue";
import { defineHandlers } from "edgequeue/handler";
import "./index";

declare const binding: QueueBinding;
const queue = createClient(binding);

export async function producerSide(): Promise<void> {
  await queue.enqueue({ type: "demo.sleep", payload: { ms: 10 } });
  // @ts-expect-error: demo.sleep's payload needs a number `ms`
  await queue.enqueue({ type: "demo.sleep", payload: { ms: "10" } });
  // @ts-expect-error: an unregistered type is refused once the registry is in use
  await queue.enqueue({ type: "demo.unknown", payload: {} });
  const { job } = await queue.enqueue({ type: "demo.flaky", payload: { failTimes: 1 } });
  // job is null only for an id retention already deleted (still taken, nothing created).
  const failTimes: number | undefined = job?.payload.failTimes;
  void failTimes;
}

export const handlerSide = defineHandlers({
  "demo.sleep": (payload) => {
    const ms: number = payload.ms;
    // @ts-expect-error: payload.ms is a number, not a string
    const wrong: string = payload.ms;
    return { ms, wrong };
  },
});

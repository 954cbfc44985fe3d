/**
 * Signals and wait tokens as the coordinator routes them (docs/workflows.md): to the object of the job's id, of the
 * key's home, or of the job a token names. The object decides everything — whether the signal ends a wait or is
 * kept, whether a token is real and unexpired. No SQL here.
 *
 * @module
 */
import { QueueError } from "../errors";
import { homeFor } from "../job/home";
import { checkJsonSize } from "../job/json-size";
import type { KeySignal, SignalResult } from "../job/schemas";
import { parseToken, tokenIsSigned } from "../job/wait-token";
import type { QueueContext } from "./queue-context";
import { refusalError } from "./refusals";
import { registryHome } from "../job/event-tags";

/** answerOf: the object's answer as the API's — with what the job waits for now, so a kept signal is not a silent one. */
function answerOf(out: { id: string; resumed: boolean; waitingFor: SignalResult["waitingFor"] }): SignalResult {
  return { id: out.id, delivered: out.resumed ? "resumed" : "kept", waitingFor: out.waitingFor };
}

export class Signals {
  constructor(private readonly q: QueueContext) {}

  /** toJob: a signal to the job `id`. */
  async toJob(id: string, name: string, data: unknown): Promise<SignalResult> {
    const out = await this.q.scope(this.q.homeOf(id)).signal(id, name, this.dataJson(data));
    if (!out.ok) throw refusalError(id, out, "signal");
    return answerOf(out);
  }

  /** publish: an event told to its topic's registry, which ends the event waits it matches; answers how many. */
  async publish(topic: string, eventId: string, payload: unknown): Promise<number> {
    return this.q.scope(registryHome(topic)).publish(topic, eventId, JSON.stringify(payload));
  }

  /** toKey: a signal to the live job of `type` holding the key, in the key's home. */
  async toKey(req: KeySignal): Promise<SignalResult> {
    const home = homeFor({ type: req.type, scope: req.scope ?? null, dedupeKey: req.dedupeKey, localId: "" }, this.q.config.typeSettings(req.type).shards).name;
    const out = await this.q.scope(home).signalKey(req.type, req.dedupeKey, req.name, this.dataJson(req.data));
    if (!out.ok) {
      if (out.code === "not_found") throw new QueueError("not_found", `no live job of type ${req.type} holds dedupe key ${JSON.stringify(req.dedupeKey)}${req.scope ? ` in scope ${req.scope.type}/${req.scope.id}` : ""}`);
      throw refusalError(`of key ${JSON.stringify(req.dedupeKey)}`, out, "signal");
    }
    return answerOf(out);
  }

  /**
   * completeToken: a wait token's completion. Its signature is checked here first (job/wait-token.ts): a token
   * not signed under this queue's QUEUE_TOKEN reaches no object.
   */
  async completeToken(token: string, data: unknown): Promise<SignalResult> {
    const parts = parseToken(token);
    const queueToken = this.q.env.QUEUE_TOKEN;
    if (!parts || !queueToken || !(await tokenIsSigned(queueToken, parts))) throw new QueueError("not_found", "no such wait token");
    const home = this.q.homeOf(parts.jobId);
    const out = await this.q.scope(home).completeToken(token, this.dataJson(data));
    if (!out.ok) {
      if (out.code === "not_found") throw new QueueError("not_found", "no such wait token");
      if (out.code === "gone") throw new QueueError("gone", out.reason);
      throw refusalError(parts.jobId, out, "complete a wait token of");
    }
    return answerOf(out);
  }

  private dataJson(data: unknown): string {
    const json = JSON.stringify(data ?? null);
    checkJsonSize(json, this.q.config.limits.payloadMaxBytes, "data");
    return json;
  }
}


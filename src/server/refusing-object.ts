/**
 * The Durable Object classes of a Worker whose config is invalid
 * (createQueue). The queue's own classes read the config when an object is
 * constructed, and a class that throws there fails every call and every alarm
 * of every object, again at each retry, until the alarm's retries run out and
 * it is dropped. Instead each object refuses its calls with the config's
 * problems — a request `503 misconfigured` as the Worker answers, an RPC call
 * an error with the same message — and keeps its alarm, so the Worker that
 * runs the fixed config does the work the alarm was set for.
 *
 * @module
 */
import { DurableObject } from "cloudflare:workers";
import { errorResponse } from "../coordinator/error-response";
import { QueueError } from "../errors";

/** A refused alarm comes back this much later: once the config is fixed, an object's due work resumes within it. */
export const REFUSED_ALARM_AGAIN_MS = 60_000;

/** The runtime's handlers, defined below; every other method of the queue's class is an RPC method, refused. */
const HANDLERS = new Set(["constructor", "fetch", "alarm", "webSocketMessage", "webSocketClose", "webSocketError"]);

/** A Durable Object class, as the Worker's main module exports it. */
export type ObjectClass = new (ctx: DurableObjectState, env: any) => DurableObject;

/** refusingObject: a class with `Base`'s RPC methods, each refusing with `message`; nothing of `Base` runs. */
export function refusingObject(Base: abstract new (...args: any[]) => object, message: string): ObjectClass {
  const refusal = () => new QueueError("misconfigured", message);
  class Refusing extends DurableObject {
    override async fetch(): Promise<Response> {
      return errorResponse(refusal());
    }

    override async alarm(): Promise<void> {
      await this.ctx.storage.setAlarm(Date.now() + REFUSED_ALARM_AGAIN_MS);
    }

    /** A live subscriber's socket (scope objects hold them) is closed: it reopens to a 503 until the config is fixed. */
    override async webSocketMessage(ws: WebSocket): Promise<void> {
      ws.close(1011, "edgequeue is misconfigured: see the Worker's log");
    }

    override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
      try {
        ws.close(code, reason);
      } catch {
        // The runtime answered the close already.
      }
    }

    override async webSocketError(): Promise<void> {}
  }
  for (const name of rpcMethods(Base)) {
    const method = {
      async [name](): Promise<never> {
        throw refusal();
      },
    }[name]!;
    Object.defineProperty(Refusing.prototype, name, { value: method, writable: true, configurable: true });
  }
  return Refusing;
}

/** rpcMethods: the methods of Base's prototype chain, up to DurableObject's, but the runtime's handlers. */
function rpcMethods(Base: abstract new (...args: any[]) => object): string[] {
  const names = new Set<string>();
  for (let p = Base.prototype as object | null; p && p !== DurableObject.prototype && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (!HANDLERS.has(name) && typeof Object.getOwnPropertyDescriptor(p, name)?.value === "function") names.add(name);
    }
  }
  return [...names];
}

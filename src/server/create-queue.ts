/**
 * createQueue: the queue inside a Worker of the user's own (README "Add
 * edgequeue to a Worker"). It returns the Worker (`fetch`, the dashboard and
 * the HTTP API), the `EdgeQueue` RPC entrypoint and every Durable Object
 * class, all reading one config — the one given here in code (checked now,
 * at startup, with the same messages as `EDGEQUEUE_CONFIG`), or that var when
 * none is given — and the handlers this Worker runs itself. A Worker whose
 * config is invalid still starts, logs the problems once, and answers every
 * request and call `503 misconfigured` with them, so under `wrangler dev` a
 * fix saved is a reload away (docs/deploy.md "Add edgequeue to a Worker").
 *
 * In-Worker handlers are pushed like a handler Worker's: each batch is an RPC
 * call over `ctx.exports.EdgeQueueHandlers`, a loopback service binding, so a
 * handler runs in its own invocation, never inside the scope object's event
 * (its CPU, memory and failures stay its own; docs/design.md "Handlers in the
 * queue's Worker").
 *
 * @example
 * const queue = createQueue({ config, handlers });
 * export const { EdgeQueue, EdgeQueueHandlers, ScopeDO, CatalogDO, PoolDO, ScheduleDO, WaitDO } = queue;
 * export default queue.worker;
 *
 * @module
 */
import { residentEnv } from "../residency";
import { env as workerEnv, type DurableObject } from "cloudflare:workers";
import { CatalogDO as BaseCatalogDO } from "../catalog/catalog-do";
import { vaultOf } from "../sealing/vault";
import { CODE_SOURCE, ConfigError, fromCode, loadConfig, bindingsProblem, VAR_SOURCE } from "../config/load";
import type { QueueConfigInput as ConfigInput, QueueConfig } from "../config/schema";
import { createQueueApp } from "./app";
import { errorResponse } from "../coordinator/error-response";
import { EdgeQueue as BaseEdgeQueue } from "../coordinator/rpc";
import type { Env } from "../env";
import { QueueError } from "../errors";
import { PoolDO as BasePoolDO } from "../pool/pool-do";
import { ScheduleDO as BaseScheduleDO } from "../schedule/schedule-do";
import { ScopeDO as BaseScopeDO } from "../scope/scope-do";
import { WaitDO as BaseWaitDO } from "../claim-wait/wait-do";
import { LOCAL_HANDLERS, missingHandlers, missingObjects } from "./bindings";
import { refusingObject, type ObjectClass } from "./refusing-object";
import { withHandlers } from "./with-handlers";

/** A class defineHandlers made: it knows its job types. */
export interface HandlersClassLike {
  new (...args: any[]): unknown;
  readonly jobTypes: readonly string[];
}

export interface CreateQueueOptions<H extends HandlersClassLike | undefined = undefined> {
  /** The queue config (defineConfig). Without it the queue reads the EDGEQUEUE_CONFIG var, as before. */
  config?: ConfigInput;
  /** This Worker's own handlers (defineHandlers): their types are pushed to them unless the config gives a type a binding. */
  handlers?: H;
}

type Ctx = { exports?: Record<string, unknown> };

/** A Durable Object class of the queue's, as the Worker's main module exports it. */
export type QueueObjectClass = ObjectClass;

/** What createQueue returns: export each class under its own name, and `worker` as the default export. */
export interface Queue<H> {
  /** The default export: the HTTP API, the dashboard and /v1/openapi.json. */
  worker: { fetch(request: Request, env: object, ctx: ExecutionContext): Response | Promise<Response> };
  /** The RPC entrypoint other Workers bind to (`entrypoint: "EdgeQueue"`). */
  EdgeQueue: typeof BaseEdgeQueue;
  ScopeDO: QueueObjectClass;
  CatalogDO: QueueObjectClass;
  PoolDO: QueueObjectClass;
  ScheduleDO: QueueObjectClass;
  WaitDO: QueueObjectClass;
  /** The handlers given, to export under this name: the queue calls them through ctx.exports.EdgeQueueHandlers. */
  EdgeQueueHandlers: H;
  /** The config in force, every default filled in; reading it throws the ConfigError when the config is invalid. */
  readonly config: QueueConfig;
}

export function createQueue<H extends HandlersClassLike | undefined = undefined>(options: CreateQueueOptions<H> = {}): Queue<H> {
  return queueFrom(options, workerEnv as object | undefined);
}

/**
 * keysProblem: what is wrong with EDGEQUEUE_ENCRYPTION_KEYS, or null (sealing/keys.ts). A queue told to seal never
 * runs without its keys: every call is refused, naming the entry and field, until the secret is fixed.
 */
function keysProblem(env: object): string | null {
  try {
    vaultOf(env as { EDGEQUEUE_ENCRYPTION_KEYS?: string });
    return null;
  } catch (e) {
    if (e instanceof QueueError) return e.message;
    throw e;
  }
}

/** The config a Worker runs, read once at startup: the config in force, or what is wrong with it. */
type ReadConfig = { ok: true; config: QueueConfig; given: ConfigInput | undefined } | { ok: false; problem: string };

function readConfig(options: CreateQueueOptions<HandlersClassLike | undefined>, localTypes: readonly string[], fromVar: unknown): ReadConfig {
  try {
    const given = options.config !== undefined || localTypes.length > 0 ? fromCode(withHandlers(options.config ?? {}, localTypes)) : undefined;
    if (given && fromVar !== undefined) {
      throw new ConfigError(`Two configs: createQueue was given one and the Worker also has an EDGEQUEUE_CONFIG var (wrangler config \`vars\` or .dev.vars). Keep one: the var is ignored when createQueue has a config, so remove it.`);
    }
    // Parsed here once and cached: every part of the queue reads it through loadConfig (config/load.ts).
    return { ok: true, config: loadConfig({ EDGEQUEUE_CONFIG: given ?? fromVar }), given };
  } catch (e) {
    if (e instanceof ConfigError) return { ok: false, problem: e.message };
    throw e;
  }
}

/** queueFrom: createQueue, with the env the Worker started with given (tests give their own; none outside a Worker). */
export function queueFrom<H extends HandlersClassLike | undefined = undefined>(options: CreateQueueOptions<H>, startupEnv: object | undefined): Queue<H> {
  const localTypes = options.handlers?.jobTypes ?? [];
  const read = readConfig(options, localTypes, (startupEnv as { EDGEQUEUE_CONFIG?: unknown } | undefined)?.EDGEQUEUE_CONFIG);
  // An invalid config does not stop the Worker: `wrangler dev` would stop with it, and a fix saved would not reload.
  // The Worker starts and refuses every call with the message instead (setupProblem); `edgequeue check` refuses it before a deploy.
  const configProblem = read.ok ? null : read.problem;
  const given = read.ok ? read.given : undefined;
  const source = given ? CODE_SOURCE : VAR_SOURCE;

  /** The last problem logged, so each is logged once per isolate: at startup, and at the first request only if it has more to say. */
  let logged: string | null = null;
  const logProblem = (message: string) => {
    if (message === logged) return;
    logged = message;
    console.error(JSON.stringify({ event: "setup:misconfigured", message }));
  };
  // Startup, in a Worker (outside one, as when `edgequeue check` loads the main module in Node, there is no env and
  // nothing to log): the config's problems and a missing binding are logged at once, not only at the first request
  // (ctx.exports is known only then).
  if (startupEnv) {
    const known = [configProblem, missingObjects(startupEnv), keysProblem(startupEnv)].filter((l) => l !== null).join("\n\n");
    if (known) logProblem(known);
    if (read.ok) for (const warning of read.config.warnings) console.warn(JSON.stringify({ event: "config:warning", warning }));
  }

  /**
   * queueEnv: the Worker's env, with the config given here and the loopback binding to its handlers (read from
   * this invocation's or this object's own ctx, when used). A new object each time costs two property definitions;
   * the parsed config is cached by the config object (config/load.ts).
   */
  const queueEnv = (env: object, ctx: Ctx): Env => {
    const e = Object.create(env) as Env;
    if (given) Object.defineProperty(e, "EDGEQUEUE_CONFIG", { value: given });
    if (localTypes.length) Object.defineProperty(e, LOCAL_HANDLERS, { get: () => ctx.exports?.[LOCAL_HANDLERS] });
    // Each object reached in its jurisdiction (residency.ts); an invalid config is the setup problem's to say.
    if (!read.ok) return e;
    try {
      return residentEnv(e, loadConfig(e));
    } catch (err) {
      if (err instanceof ConfigError) return e;
      throw err;
    }
  };

  /** What the Worker lacks, found once per isolate: null when nothing. Bindings the config names are checked too. */
  let problem: string | null | undefined;
  const setupProblem = (env: Env, ctx: Ctx): string | null => {
    if (problem !== undefined) return problem;
    const handlersMissing = localTypes.length ? missingHandlers(ctx.exports) : null;
    // A missing handlers export is said once, not again for each of its types; an invalid config names no bindings to check.
    const bindings = read.ok && !handlersMissing ? bindingsProblem(read.config, env, source) : null;
    problem = [configProblem, missingObjects(env), handlersMissing, bindings, keysProblem(env)].filter((l) => l !== null).join("\n\n") || null;
    if (problem) logProblem(problem);
    return problem;
  };
  const refusal = (message: string) => new QueueError("misconfigured", message);

  const app = createQueueApp();
  const worker = {
    fetch(request: Request, env: object, ctx: ExecutionContext & Ctx): Response | Promise<Response> {
      const e = queueEnv(env, ctx);
      const p = setupProblem(e, ctx);
      if (p) return errorResponse(refusal(p));
      return app.fetch(request, e, ctx);
    },
  } satisfies ExportedHandler<object>;

  class EdgeQueue extends BaseEdgeQueue {
    constructor(ctx: ExecutionContext, env: Env) {
      super(ctx, queueEnv(env, ctx as Ctx));
      this.setupProblem = () => {
        const p = setupProblem(this.env, this.ctx as Ctx);
        return p ? refusal(p) : null;
      };
    }
  }
  /**
   * The queue's Durable Object class `Base`, reading the env queueEnv makes (the config given here, the loopback
   * binding) — or, with an invalid config, one that refuses its calls with the message (refusing-object.ts).
   */
  const objectClass = (Base: new (ctx: DurableObjectState, env: Env) => DurableObject): QueueObjectClass => {
    if (configProblem) return refusingObject(Base, configProblem);
    const Mixin = Base as unknown as new (...args: any[]) => DurableObject;
    return class extends Mixin {
      constructor(...[ctx, env]: any[]) {
        super(ctx, queueEnv(env, ctx as Ctx));
      }
    };
  };

  return {
    worker,
    EdgeQueue,
    ScopeDO: objectClass(BaseScopeDO),
    CatalogDO: objectClass(BaseCatalogDO),
    PoolDO: objectClass(BasePoolDO),
    ScheduleDO: objectClass(BaseScheduleDO),
    WaitDO: objectClass(BaseWaitDO),
    EdgeQueueHandlers: options.handlers as H,
    get config(): QueueConfig {
      if (!read.ok) throw new ConfigError(read.problem);
      return read.config;
    },
  };
}

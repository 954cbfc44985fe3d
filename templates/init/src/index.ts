// The Worker: the queue (HTTP API, dashboard, the EdgeQueue RPC entrypoint, its Durable Objects) and the handlers.
import { defineHandlers } from "edgequeue/handler";
import { createQueue } from "edgequeue/server";
import config from "../edgequeue.config";
import { handlers } from "./handlers";

const queue = createQueue({ config, handlers: defineHandlers(handlers) });

export const { EdgeQueue, EdgeQueueHandlers, ScopeDO, CatalogDO, PoolDO, ScheduleDO, WaitDO } = queue;
export default queue.worker;

/**
 * This repo's queue Worker (`npm start`, the tests, the benchmarks): the
 * product path, edgequeue/server's createQueue, with the config from the
 * EDGEQUEUE_CONFIG var in wrangler.toml and the demo handlers in their own
 * Worker over a service binding (examples/handler), so both ways of running
 * handlers stay tested. A project `edgequeue init` writes has the same file,
 * with its config and handlers given in code.
 *
 * @module
 */
import { createQueue } from "edgequeue/server";

const queue = createQueue();

export const { EdgeQueue, ScopeDO, CatalogDO, PoolDO, ScheduleDO, WaitDO } = queue;
export default queue.worker;

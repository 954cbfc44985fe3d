/**
 * `edgequeue/queues`: Cloudflare Queues in and out (docs/coming-from/cloudflare-queues.md). `queueConsumer` makes a
 * queue's messages edgequeue jobs, `queueProducer` gives code written for a queue binding's `send` / `sendBatch`
 * edgequeue jobs instead.
 *
 * @module
 */
export { queueConsumer, type EnqueueManyClient, type MessageBatchLike, type QueueConsumerOptions, type QueueMessageLike } from "./consumer";
export { queueProducer, type MessageSendRequest, type ProducerClient, type QueueContentType, type QueueProducer, type QueueProducerOptions, type QueueSendOptions } from "./producer";

/**
 * Builds the handler Workers the tests run beside the coordinator (auxiliary
 * workers must be prebuilt JS): the example handler and the test fixture; and starts the local receiver of
 * completion callbacks and OTLP exports.
 */
import { execFileSync } from "node:child_process";
import { startReceiver } from "./receiver.mjs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
export const BUILD = path.join(root, ".test-build");

export default async function setup() {
  for (const [name, config] of [
    ["example-handler", "examples/handler/wrangler.toml"],
    ["test-handler", "test/fixtures/handler/wrangler.toml"],
    ["test-queues", "test/fixtures/queues/wrangler.toml"],
  ]) {
    execFileSync(path.join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", path.join(BUILD, name), "-c", config], {
      cwd: root,
      stdio: "pipe",
    });
  }
  // The receiver completion callbacks and OTLP exports go to (test/receiver.mjs), on the port the config chose.
  const stops = [await startReceiver(Number(process.env.EDGEQUEUE_TEST_RECEIVER_PORT)), await startReceiver(Number(process.env.EDGEQUEUE_TEST_RECEIVER2_PORT))];
  return () => Promise.all(stops.map((stop) => stop()));
}

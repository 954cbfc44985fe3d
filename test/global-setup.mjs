/**
 * Builds the handler Workers the tests run beside the coordinator (auxiliary
 * workers must be prebuilt JS): the example handler and the test fixture.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
export const BUILD = path.join(root, ".test-build");

export default function setup() {
  for (const [name, config] of [
    ["example-handler", "examples/handler/wrangler.toml"],
    ["test-handler", "test/fixtures/handler/wrangler.toml"],
  ]) {
    execFileSync(path.join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", path.join(BUILD, name), "-c", config], {
      cwd: root,
      stdio: "pipe",
    });
  }
}

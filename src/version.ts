/**
 * The package version, reported by `GET /v1/health`, the OpenAPI document, exported spans and `edgequeue
 * --version`. Read from package.json at build time: every bundler that builds this module (wrangler's esbuild for
 * `npm start`, vite in the tests, tsup for dist/, a project's own wrangler over dist/) inlines the one field it
 * names, so a Worker — which has no package.json at run time — reports the version it was built from, and
 * `npm run release` bumping package.json is all a release needs.
 */
import { version } from "../package.json";

export const VERSION: string = version;

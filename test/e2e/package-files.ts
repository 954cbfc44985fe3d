/**
 * What the packed package may hold (package.json `files`, and what npm always adds), as the paths `tar -tzf` lists:
 * the built entry points, the templates `init` writes from, and the README, CHANGELOG and docs with everything
 * their relative links reach (test/e2e/init-project.test.ts checks the links) — never sources or tests.
 */
export const SHIPPED =
  /^package\/(package\.json|README\.md|CHANGELOG\.md|LICENSE|dist\/[\w.-]+\.(js|d\.ts)|docs\/([\w-]+\/)?[\w.-]+\.md|docs\/images\/[\w-]+\.png|templates\/init\/.+|bench\/README\.md|bench\/results\/throughput\.svg|examples\/(live|producer)\/.+)$/;

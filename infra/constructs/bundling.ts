/**
 * How every function is bundled. The `ServiceFunction` construct and `npm run bench` (bundle sizes
 * and cold imports) both use these, so the benchmark measures what is deployed.
 */
export const BUNDLING = {
  format: 'esm',
  /** Syntax level: the Lambda runtime's (nodejs22.x), which is the Node the project runs and tests on (.nvmrc). */
  target: 'node22',
  minify: true,
  sourceMap: true,
  mainFields: ['module', 'main'],
  // ESM output has no `require`; bundled CommonJS dependencies still call it.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
} as const;

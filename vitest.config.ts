import { defineConfig } from 'vitest/config';

/**
 * Three projects, so the fast ones run alone: `unit` needs no emulators and no Java, `infra`
 * synthesizes the CDK app, `integration` starts the local stack once for the whole run (and runs
 * the real converters). `vitest run` runs all three; `--project <name>` one of them.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    env: { LOG_LEVEL: 'warn', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        // Unit tests call pure functions, so a worker may keep the modules it loaded for the next
        // file: the SDK and the service's modules load once per worker instead of once per file,
        // which is most of this project's time.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      // Both start the build of ffmpeg at once when a fresh clone has none (test/support/ffmpeg-setup.ts, once per run).
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'], globalSetup: ['test/support/ffmpeg-setup.ts'] } },
      {
        extends: true,
        // Two files at a time even on a 2-core machine (vitest's default there is one): most of an
        // integration file's time is waiting (on workers, queues, retries, timeouts), not CPU. A
        // worker count of its own needs a group of its own: it runs after the unit and infra projects.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/ffmpeg-setup.ts', 'test/support/global-setup.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

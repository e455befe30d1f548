import { isAbsolute, relative } from 'node:path';
import { describeFailure } from '../../shared/errors.js';
import { LOCAL_OWNER_EMAIL, startLocalStack, stackFile } from './stack.js';

/**
 * `npm start`: the whole service on 127.0.0.1 in one foreground process. PORT (default 4000),
 * DATA_DIR (default .local), MEMORY=1 to keep nothing on disk. Ctrl-C or SIGTERM stops everything.
 */
const started = performance.now();

/** The banner's line about an ffmpeg build this start began (npm ci builds none). */
const ffmpegLine = ({ log, replacing }: { log: string; replacing: boolean }) =>
  replacing
    ? `being rebuilt in the background (its build script changed; log: ${log}); the older build serves meanwhile`
    : `not built yet: building in the background (a few minutes, once per clone; log: ${log}); videos wait for it`;
const port = Number(process.env.PORT ?? 4000);
const dataDir = process.env.DATA_DIR ?? '.local';
const memory = process.env.MEMORY === '1';

try {
  const local = await startLocalStack({ port, dataDir, memory, log: (line) => process.stderr.write(`[local] ${line}\n`) });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const { stack, services } = local;
  process.stdout.write(
    [
      '',
      `Review Board Service is running locally (up in ${seconds} s${memory ? ', in memory' : ''})`,
      `  Review app          ${stack.baseUrl}/`,
      `  API                 ${stack.baseUrl}/api/v2   (OpenAPI: ${stack.baseUrl}/api/v2/openapi.json)`,
      `  API reference       ${stack.baseUrl}/api/v2/docs`,
      `  organizationId      ${stack.organizationId}`,
      `  workspaceId         ${stack.workspaceId}`,
      `  organizationApiKey  ${stack.organizationApiKey}`,
      `  workspaceApiKey     ${stack.workspaceApiKey}`,
      `  DynamoDB ${services.endpoints.dynamodb}   S3 ${services.endpoints.s3}   SQS ${services.endpoints.sqs}`,
      `  Sign in             ${stack.baseUrl}/sign-in as ${LOCAL_OWNER_EMAIL}; the link arrives in the SES emulator at ${services.endpoints.ses}/ (JSON: ${services.endpoints.ses}/store)`,
      `  stack.json          ${isAbsolute(dataDir) ? stackFile(local.dataDir) : relative(process.cwd(), stackFile(local.dataDir)) || stackFile(local.dataDir)}`,
      ...(local.ffmpegBuild ? [`  ffmpeg              ${ffmpegLine(local.ffmpegBuild)}`] : []),
      '  Ctrl-C stops everything.',
      '',
    ].join('\n') + '\n',
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`[local] ${signal}: stopping\n`);
    await local.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  // If whatever started us dies without a signal reaching us, stop instead of leaking emulators.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown('parent exited');
  }, 1000).unref();
} catch (error) {
  process.stderr.write(`[local] failed to start: ${describeFailure(error)}\n`);
  process.exit(1);
}

import type { AddressInfo } from 'node:net';
import sesModule from 'aws-ses-v2-local';

type StartSes = typeof sesModule.default;
/** The package is CommonJS with `exports.default`: Node's ESM import hands over the exports object, some loaders the function. */
const startSesServer: StartSes = typeof sesModule === 'function' ? (sesModule as StartSes) : sesModule.default;

export interface LocalSes {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * aws-ses-v2-local, in memory, on a free loopback port: SES v2 `SendEmail` for the functions, and
 * `GET /store` (every email it received) for people and tests; its web viewer is at `/`.
 */
export async function startSes(): Promise<LocalSes> {
  const server = await startSesServer({ host: '127.0.0.1', port: 0 });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

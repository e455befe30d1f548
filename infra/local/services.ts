import { existsSync, readFileSync } from 'node:fs';
import { installFaultHook, takeArmedFault } from '../../shared/db/core/faults.js';
import { servicesFile, useLocalServices, type ServicesInfo } from './stack.js';

/**
 * Points this process at the running local stack found through DATA_DIR (default `.local`), and
 * runs its fault points as the stack's own processes do (a test's armed fault fires in the admin
 * CLI or `npm run invoke` too). Returns false when no local stack has written its services file there.
 */
export function attachToLocalStack(dataDir = process.env.DATA_DIR ?? '.local'): boolean {
  const file = servicesFile(dataDir);
  if (!existsSync(file)) return false;
  const services = JSON.parse(readFileSync(file, 'utf8')) as ServicesInfo;
  useLocalServices(services);
  installFaultHook(takeArmedFault);
  return true;
}

import { existsSync, readFileSync } from 'node:fs';
import { servicesFile, useLocalServices, type ServicesInfo } from './stack.js';

/**
 * Points this process at the running local stack found through DATA_DIR (default `.local`).
 * Returns false when no local stack has written its services file there.
 */
export function attachToLocalStack(dataDir = process.env.DATA_DIR ?? '.local'): boolean {
  const file = servicesFile(dataDir);
  if (!existsSync(file)) return false;
  const services = JSON.parse(readFileSync(file, 'utf8')) as ServicesInfo;
  useLocalServices(services);
  return true;
}

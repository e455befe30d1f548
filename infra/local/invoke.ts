import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Context } from 'aws-lambda';
import { entryOf, FUNCTIONS } from '../../functions/registry.js';
import { attachToLocalStack } from './services.js';
import { stackFile } from './stack.js';

/**
 * `npm run invoke -- <function> <event-file> [name=value ...]`: runs one function on one event (for
 * example from `events/`) against the running local stack and prints its result as JSON. `{{name}}`
 * in the event is replaced by the stack.json field or a `name=value` given here.
 */
const [name, eventFile, ...extra] = process.argv.slice(2);
const names = FUNCTIONS.map((definition) => definition.name);
if (!name || !eventFile || !names.includes(name)) {
  process.stderr.write(`usage: npm run invoke -- <function> <event-file>\nfunctions: ${names.join(', ')}\n`);
  process.exit(2);
}
if (!attachToLocalStack()) {
  process.stderr.write('No running local stack found: start one with `npm start` (same DATA_DIR).\n');
  process.exit(1);
}
// `{{workspaceApiKey}}` and the other stack.json fields in a sample event become this stack's values,
// so the samples in events/ authenticate against whichever local stack is running.
const stack = JSON.parse(readFileSync(stackFile(process.env.DATA_DIR ?? '.local'), 'utf8')) as Record<string, string>;
const values: Record<string, string | undefined> = { ...stack, ...Object.fromEntries(extra.map((pair) => pair.split('=') as [string, string])) };
const text = readFileSync(resolve(eventFile), 'utf8').replace(/\{\{(\w+)\}\}/g, (token, name: string) => values[name] ?? token);
const event: unknown = JSON.parse(text);
const module = (await import(new URL(`../../${entryOf({ name })}`, import.meta.url).href)) as {
  handler: (event: unknown, context: Context) => Promise<unknown>;
};
const context = { awsRequestId: 'local-invoke', functionName: name, getRemainingTimeInMillis: () => 30_000 } as Context;
const result = await module.handler(event, context);
process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Context } from 'aws-lambda';
import { entryOf, FUNCTIONS } from '../../functions/registry.js';
import { attachToLocalStack } from './services.js';
import { stackFile } from './stack.js';

/**
 * `npm run invoke -- <function> <event-file> [name=value ...]`: runs one function on one event (for
 * example from `events/`) against the running local stack and prints its result as JSON. `{{name}}`
 * in the event is replaced by a `name=value` given here or else the stack.json field of that name.
 * It invokes nothing while a placeholder stays unfilled (a literal `{{markupId}}` would only reach
 * the function as a confusing bad id) or a given name matches no placeholder (a typo).
 */
const [name, eventFile, ...extra] = process.argv.slice(2);
const names = FUNCTIONS.map((definition) => definition.name);
const USAGE = `usage: npm run invoke -- <function> <event-file> [name=value ...]\nfunctions: ${names.join(', ')}`;

function usageError(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

if (!name || !eventFile) usageError('A function and an event file are needed.');
if (!names.includes(name)) usageError(`Unknown function "${name}".`);
const template = readEventFile(resolve(eventFile));
const placeholders = [...new Set(Array.from(template.matchAll(/\{\{(\w+)\}\}/g), (match) => match[1]!))];
const given = new Map<string, string>();
for (const pair of extra) {
  const at = pair.indexOf('=');
  if (at <= 0) usageError(`"${pair}" is not a name=value pair.`);
  given.set(pair.slice(0, at), pair.slice(at + 1));
}
const unknown = [...given.keys()].filter((key) => !placeholders.includes(key));
if (unknown.length > 0) {
  usageError(
    `${unknown.map((key) => `"${key}"`).join(', ')} ${unknown.length === 1 ? 'matches' : 'match'} no placeholder of ${eventFile} ` +
      `(its placeholders: ${placeholders.join(', ') || 'none'}).`,
  );
}
if (!attachToLocalStack()) {
  process.stderr.write('No running local stack found: start one with `npm start` (same DATA_DIR).\n');
  process.exit(1);
}
// `{{workspaceApiKey}}` and the other stack.json fields in a sample event become this stack's values,
// so the samples in events/ authenticate against whichever local stack is running.
const stack = JSON.parse(readFileSync(stackFile(process.env.DATA_DIR ?? '.local'), 'utf8')) as Record<string, unknown>;
const valueOf = (placeholder: string): string | undefined =>
  given.get(placeholder) ?? (typeof stack[placeholder] === 'string' ? stack[placeholder] : undefined);
const missing = placeholders.filter((placeholder) => valueOf(placeholder) === undefined);
if (missing.length > 0) {
  usageError(
    `${eventFile} needs a value for ${missing.join(', ')}: ` +
      `add ${missing.map((placeholder) => `${placeholder}=...`).join(' ')} after the event file.`,
  );
}
const text = template.replace(/\{\{(\w+)\}\}/g, (_token, placeholder: string) => valueOf(placeholder)!);
const event: unknown = JSON.parse(text);
const module = (await import(new URL(`../../${entryOf({ name })}`, import.meta.url).href)) as {
  handler: (event: unknown, context: Context) => Promise<unknown>;
};
const context = { awsRequestId: 'local-invoke', functionName: name, getRemainingTimeInMillis: () => 30_000 } as Context;
const result = await module.handler(event, context);
process.stdout.write(`${JSON.stringify(result ?? null, null, 2)}\n`);

function readEventFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return usageError(`Cannot read the event file ${path}.`);
  }
}

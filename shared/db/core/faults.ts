import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../../clients.js';
import { getConfig } from '../../config.js';
import { put, transact } from './transact.js';

/**
 * Test-only fault points, so tests can prove that work interrupted after a commit resumes. A point
 * is armed by a `FAULT#<point>#<subject>` record and fires once (the record is deleted as it fires).
 *
 * Request code only calls `failIfArmed`, a hook that does nothing unless a process installed one:
 * the local stack's (`useLocalServices` installs `takeArmedFault`, which reads the FAULT record),
 * or a unit test's. Nothing deployed installs it, so a deployed function never reads a FAULT record
 * and its request code has no branch of the local stack's.
 */
export type FaultPoint =
  | 'after-move-commit'
  | 'before-original-move'
  | 'before-invitation-email'
  // Subject: the address a sign-in link is for; its email fails to send.
  | 'before-sign-in-email'
  | 'after-thread-commit'
  // Subject: the markup a thread backfill attempt has put index items for, before it gives threads their copies.
  | 'backfill-before-copies'
  | 'kill-delivery-worker'
  | 'fanout-between-batches'
  // Subject: the workspace a markup is created in; the request dies between its commit and queueing the markup's job.
  | 'before-work-enqueue'
  // Subject: a markup being deleted; the deletion dies after its threads went, before the markup record does.
  | 'after-conversation-deletion';

/** What a fault point runs: throws (an InjectedFault) when `point` is armed for `subject`. */
export type FaultHook = (point: FaultPoint, subject: string) => Promise<void>;

const faultKey = (point: FaultPoint, subject: string) => ({ PK: `FAULT#${point}#${subject}`, SK: 'FAULT' });

export class InjectedFault extends Error {
  override name = 'InjectedFault';
}

let hook: FaultHook | undefined;

/**
 * Installs the hook every fault point runs (undefined: none, the default). Answers the hook it
 * replaces, so a test can put it back.
 */
export function installFaultHook(next: FaultHook | undefined): FaultHook | undefined {
  const previous = hook;
  hook = next;
  return previous;
}

/** A fault point: runs the installed hook (it throws an InjectedFault when `point` is armed for `subject`); nothing without one. */
export async function failIfArmed(point: FaultPoint, subject: string): Promise<void> {
  if (hook) await hook(point, subject);
}

/** Arms `point` for `subject` (an item id): the next time the local stack reaches it, it throws once. */
export async function armFault(point: FaultPoint, subject: string): Promise<void> {
  await transact([put({ ...faultKey(point, subject), entity: 'Fault' })]);
}

/** The local stack's hook: throws an InjectedFault when `point` is armed for `subject`, disarming it. */
export const takeArmedFault: FaultHook = async (point, subject) => {
  const result = await getDb().send(
    new DeleteCommand({ TableName: getConfig().tableName, Key: faultKey(point, subject), ReturnValues: 'ALL_OLD' }),
  );
  if (result.Attributes) throw new InjectedFault(`injected fault at ${point} for ${subject}`);
};

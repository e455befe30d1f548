import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { put, transact } from './transact.js';

/**
 * Test-only fault points, so tests can prove that work interrupted after a commit resumes. A point
 * is armed by a `FAULT#<point>#<subject>` record and fires once (the record is deleted as it fires).
 * Only the local stack (`STACK_MODE=local`) looks for them: a deployed function never reads one.
 */
export type FaultPoint =
  | 'after-move-commit'
  | 'before-original-move'
  | 'before-invitation-email'
  // Subject: the address a sign-in link is for; its email fails to send.
  | 'before-sign-in-email'
  | 'after-thread-commit'
  | 'kill-delivery-worker'
  | 'fanout-between-batches'
  // Subject: the workspace a markup is created in; the request dies between its commit and queueing the markup's job.
  | 'before-work-enqueue';

const faultKey = (point: FaultPoint, subject: string) => ({ PK: `FAULT#${point}#${subject}`, SK: 'FAULT' });

export class InjectedFault extends Error {
  override name = 'InjectedFault';
}

/** Arms `point` for `subject` (an item id): the next time the local stack reaches it, it throws once. */
export async function armFault(point: FaultPoint, subject: string): Promise<void> {
  await transact([put({ ...faultKey(point, subject), entity: 'Fault' })]);
}

/** Throws an InjectedFault when `point` is armed for `subject` (local stack only), disarming it. */
export async function failIfArmed(point: FaultPoint, subject: string): Promise<void> {
  if (getConfig().mode !== 'local') return;
  const result = await getDb().send(new DeleteCommand({ TableName: getConfig().tableName, Key: faultKey(point, subject), ReturnValues: 'ALL_OLD' }));
  if (result.Attributes) throw new InjectedFault(`injected fault at ${point} for ${subject}`);
}

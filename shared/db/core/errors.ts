import { TransactionCanceledException, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/** True when a write failed only because its condition did not hold (plain or inside a transaction). */
export function isConditionFailure(error: unknown): boolean {
  if (error instanceof ConditionalCheckFailedException) return true;
  if (error instanceof TransactionCanceledException) {
    return (error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed');
  }
  const name = (error as { name?: string } | undefined)?.name;
  return name === 'ConditionalCheckFailedException';
}

/** Indexes of every transaction item whose condition failed (empty for any other error). */
export function failedConditionIndexes(error: unknown): number[] {
  if (!(error instanceof TransactionCanceledException)) return [];
  return (error.CancellationReasons ?? []).flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
}

/** True when a transaction was cancelled because another transaction held one of its items (retryable). */
export function isTransactionConflict(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === 'TransactionConflict')
  );
}

/**
 * True when a Query named an index the table does not have yet, or one DynamoDB is still building
 * (a table upgraded one index per update): the caller reads without it.
 */
export function isIndexUnavailable(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  return (
    name === 'ValidationException' &&
    /index/i.test(message ?? '') &&
    /(does not have the specified index|backfill|not active|creating)/i.test(message ?? '')
  );
}

/** The POST policy document of the local S3 front: its expiry and its conditions. */
import { S3ErrorResponse } from './s3-errors.js';

export type Condition =
  | { kind: 'eq'; field: string; value: string; label: string }
  | { kind: 'starts-with'; field: string; prefix: string; label: string }
  | { kind: 'content-length-range'; min: number; max: number };

/** Only reachable with a correctly signed policy, hence S3's 400 InvalidPolicyDocument rather than 403. */
export function decodePolicy(policy: string): { expiration: number; conditions: Condition[] } {
  const invalid = (message: string) => new S3ErrorResponse(400, 'InvalidPolicyDocument', `Invalid Policy: ${message}`);
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(policy, 'base64').toString('utf8'));
  } catch {
    throw invalid('Invalid JSON.');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw invalid('Invalid JSON.');
  const { expiration, conditions } = document as { expiration?: unknown; conditions?: unknown };
  if (typeof expiration !== 'string') throw invalid('Policy missing expiration.');
  const expiresAt = Date.parse(expiration);
  if (Number.isNaN(expiresAt)) throw invalid(`Invalid 'expiration' value: '${expiration}'`);
  if (!Array.isArray(conditions)) throw invalid('Policy missing conditions.');
  return { expiration: expiresAt, conditions: conditions.map((condition) => parseCondition(condition, invalid)) };
}

function parseCondition(raw: unknown, invalid: (message: string) => S3ErrorResponse): Condition {
  const label = (op: string, field: string, value: string) =>
    `[${[op, `$${field}`, value].map((part) => JSON.stringify(part)).join(', ')}]`;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const entries = Object.entries(raw);
    const [entry] = entries;
    if (entries.length !== 1 || entry === undefined) {
      throw invalid('Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.');
    }
    const [field, value] = entry;
    if (typeof value !== 'string') throw invalid(`Invalid Simple-Condition: value of ${field} must be a string.`);
    return { kind: 'eq', field: field.toLowerCase(), value, label: label('eq', field, value) };
  }
  if (!Array.isArray(raw) || raw.length !== 3 || typeof raw[0] !== 'string') {
    throw invalid(`Invalid Condition: ${JSON.stringify(raw)}`);
  }
  const [opRaw, first, second] = raw as [string, unknown, unknown];
  const op = opRaw.toLowerCase();
  if (op === 'content-length-range') {
    const min = Number(first);
    const max = Number(second);
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) {
      throw invalid(`Invalid content-length-range: ${JSON.stringify(raw)}`);
    }
    return { kind: 'content-length-range', min, max };
  }
  if ((op !== 'eq' && op !== 'starts-with') || typeof first !== 'string' || !first.startsWith('$') || typeof second !== 'string') {
    throw invalid(`Invalid Condition: ${JSON.stringify(raw)}`);
  }
  const field = first.slice(1);
  return op === 'eq'
    ? { kind: 'eq', field: field.toLowerCase(), value: second, label: label(opRaw, field, second) }
    : { kind: 'starts-with', field: field.toLowerCase(), prefix: second, label: label(opRaw, field, second) };
}

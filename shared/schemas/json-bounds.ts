/**
 * Bounds of what the table can store, for the few fields that take free-form JSON (Delta embeds and
 * attributes). DynamoDB nests maps and lists at most 32 levels deep, refuses empty map keys, and
 * stores numbers between 1e-130 and 1e126 in magnitude; the SDK's marshaller refuses integers past
 * 2^53 and recurses once per level. A value inside these bounds is stored as sent.
 */

/** Largest magnitude of any number the API takes: past it JavaScript no longer holds integers exactly. */
export const MAX_NUMBER = Number.MAX_SAFE_INTEGER;

/**
 * Smallest non-zero magnitude of any number the API takes. DynamoDB stores down to 1e-130; a margin
 * keeps arithmetic on stored numbers (sums, scaling) inside that range.
 */
export const MIN_MAGNITUDE = 1e-100;

/** True for a finite number the table stores as sent: 0, or a magnitude within MIN_MAGNITUDE..MAX_NUMBER. */
export function isStorableNumber(value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const magnitude = Math.abs(value);
  return magnitude === 0 || (magnitude >= MIN_MAGNITUDE && magnitude <= MAX_NUMBER);
}

/** Where inside a value a problem is (`["a", "0", "b"]`) and what it is. */
export interface JsonProblem {
  path: string[];
  detail: string;
}

/**
 * The first reason `value` (a parsed JSON value) cannot be stored as sent, or undefined: containers
 * nested deeper than `maxDepth` (the value itself, when a container, is level 1), an empty object
 * key, a number outside `isStorableNumber`. Iterative, with an explicit stack, so a value nested
 * thousands of levels deep is refused rather than overflowing the call stack.
 */
export function jsonValueProblem(value: unknown, maxDepth: number): JsonProblem | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, path } = next;
    if (typeof current === 'number') {
      if (!isStorableNumber(current))
        return {
          path,
          detail: `holds the number ${current}; numbers must be 0 or between ${MIN_MAGNITUDE} and ${MAX_NUMBER} in magnitude`,
        };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (path.length >= maxDepth) return { path, detail: `nests deeper than ${maxDepth} levels` };
    for (const [key, child] of Object.entries(current)) {
      if (key === '' && !Array.isArray(current)) return { path, detail: 'holds an empty key' };
      pending.push({ value: child, path: [...path, key] });
    }
  }
  return undefined;
}

/** The problem as a sentence naming where it is inside the field. */
export function describeJsonProblem(problem: JsonProblem): string {
  return problem.path.length === 0 ? problem.detail : `${problem.detail} (at ${problem.path.join('/')})`;
}

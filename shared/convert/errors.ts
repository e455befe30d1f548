/**
 * The file itself cannot be converted (corrupt, truncated, an unsupported variant, too large, or it
 * took too long): retrying will not help, so the conversion job records it as a final failure with
 * this message, which users see. Anything else a converter throws is an infrastructure failure and
 * is retried.
 */
export class ConversionError extends Error {
  override name = 'ConversionError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The text of whatever a third-party library threw (WASM modules throw strings as well as Errors). */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

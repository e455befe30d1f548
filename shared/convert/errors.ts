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

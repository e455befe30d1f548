/** A command line the admin CLI cannot run as given: exit 2 with the usage, not 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}

import { describe, expect, it } from 'vitest';
import { getDb, getKms, getS3, getSes, getSqs } from '../../shared/clients.js';

describe('the AWS clients', () => {
  it('carry no SDK logger middleware: the service gives the SDK no logger, and the middleware filters every input and output for one that discards them', () => {
    for (const client of [getDb(), getS3(), getSqs(), getKms(), getSes()])
      expect(client.middlewareStack.identify().filter((name) => name.startsWith('loggerMiddleware'))).toEqual([]);
  });
});

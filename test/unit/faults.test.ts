import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getConfig, resetConfig } from '../../shared/config.js';
import { failIfArmed, InjectedFault, installFaultHook, takeArmedFault } from '../../shared/db/core/faults.js';
import { useFakeDb } from '../support/fake-db.js';

/** Issue 33 item 4: fault injection stays out of production paths (shared/db/core/faults.ts). */
describe('fault points: hooks only the local stack installs', () => {
  const cleanups: (() => void)[] = [];
  beforeAll(() => {
    process.env.TABLE_NAME ??= 'unit-table';
    resetConfig();
  });
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });
  const fakeDb = (answer: Parameters<typeof useFakeDb>[0]) => {
    const fake = useFakeDb(answer);
    cleanups.push(fake.restore);
    return fake;
  };
  const withHook = (hook: Parameters<typeof installFaultHook>[0]) => {
    const previous = installFaultHook(hook);
    cleanups.push(() => installFaultHook(previous));
  };

  it('reads nothing and throws nothing where no hook is installed (a deployed function), even in a process that says it is the local stack', async () => {
    withHook(undefined);
    const mode = process.env.STACK_MODE;
    process.env.STACK_MODE = 'local';
    resetConfig();
    cleanups.push(() => {
      if (mode === undefined) delete process.env.STACK_MODE;
      else process.env.STACK_MODE = mode;
      resetConfig();
    });
    const db = fakeDb(() => ({ Attributes: { PK: 'FAULT#after-move-commit#item-1', SK: 'FAULT' } }));

    await expect(failIfArmed('after-move-commit', 'item-1')).resolves.toBeUndefined();
    expect(db.sent).toEqual([]);
  });

  it("the local stack's hook takes the armed FAULT record once (a conditional-free delete) and throws an InjectedFault", async () => {
    withHook(takeArmedFault);
    let armed = true;
    const db = fakeDb(() => {
      const answer = armed ? { Attributes: { entity: 'Fault' } } : {};
      armed = false;
      return answer;
    });

    await expect(failIfArmed('before-work-enqueue', 'ws-1')).rejects.toThrow(InjectedFault);
    await expect(failIfArmed('before-work-enqueue', 'ws-1')).resolves.toBeUndefined();
    expect(db.sent).toHaveLength(2);
    expect(db.sent[0]).toEqual({
      name: 'DeleteCommand',
      input: { TableName: getConfig().tableName, Key: { PK: 'FAULT#before-work-enqueue#ws-1', SK: 'FAULT' }, ReturnValues: 'ALL_OLD' },
    });
  });
});

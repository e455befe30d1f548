import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { ENV, getConfig, resetConfig } from '../../shared/config.js';
import { appUrlSettingItem, appUrlSettingKey } from '../../shared/db/app-url-setting.js';
import { resetAppUrlCache, resolveAppUrl } from '../../shared/domain/organizations/app-url.js';
import { localStack } from '../support/api.js';

/**
 * Deployed without context `appUrl`, the functions learn the app's origin (the CloudFront
 * distribution) from the item the web stack writes at deploy time (infra/stacks/web-stack.ts,
 * `appUrlSettingItem`), read once per cold start, on the real DynamoDB Local. The local stack's
 * own handlers do not read it (they link to the gateway): this file sets the variable in its own
 * process only.
 */
const put = (value: string) => getDb().send(new PutCommand({ TableName: getConfig().tableName, Item: appUrlSettingItem(value) }));
const remove = () => getDb().send(new DeleteCommand({ TableName: getConfig().tableName, Key: appUrlSettingKey() }));

describe('resolveAppUrl with APP_URL_FROM_TABLE', () => {
  beforeAll(() => {
    localStack();
    process.env[ENV.appUrlFromTable] = '1';
    delete process.env[ENV.appUrl];
    resetConfig();
  });
  beforeEach(async () => {
    await remove();
    resetAppUrlCache();
  });
  afterAll(async () => {
    await remove();
    delete process.env[ENV.appUrlFromTable];
    resetConfig();
  });

  it('answers nothing before the web stack wrote the setting (callers link to the API origin)', async () => {
    expect(await resolveAppUrl()).toBeUndefined();
  });

  it('answers what the web stack wrote, and keeps it for the life of the process', async () => {
    await put('https://d1234abcd.cloudfront.net');

    expect(await resolveAppUrl()).toBe('https://d1234abcd.cloudfront.net');
    await remove();
    expect(await resolveAppUrl()).toBe('https://d1234abcd.cloudfront.net');
  });

  it('prefers APP_URL (context appUrl) and reads no table then', async () => {
    await put('https://d1234abcd.cloudfront.net');
    process.env[ENV.appUrl] = 'https://review.example.com';
    resetConfig();
    try {
      expect(await resolveAppUrl()).toBe('https://review.example.com');
    } finally {
      delete process.env[ENV.appUrl];
      resetConfig();
    }
  });
});

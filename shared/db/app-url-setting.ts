import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';

/**
 * The review app's origin as the deployment knows it (DESIGN.md: `appUrl` is the CloudFront
 * distribution's origin unless context `appUrl` names another). The web stack writes this item at
 * deploy time (a custom resource, infra/stacks/web-stack.ts), because the functions cannot get the
 * distribution's domain in their environment: the distribution is made after the API it forwards to.
 */
export const appUrlSettingKey = () => ({ PK: 'CONFIG', SK: 'APP_URL' });

/** The item as the web stack writes it (`value`: the origin, no trailing slash). */
export function appUrlSettingItem(value: string): Record<string, string> {
  return { ...appUrlSettingKey(), entity: 'AppUrlSetting', value };
}

export async function getAppUrlSetting(): Promise<string | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: appUrlSettingKey() }));
  const value = result.Item?.value;
  return typeof value === 'string' && /^https?:\/\/\S+$/.test(value) ? value.replace(/\/+$/, '') : undefined;
}

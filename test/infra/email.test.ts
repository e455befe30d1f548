import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/registry.js';
import { functionIdOf } from '../../infra/constructs/service-function.js';
import {
  allowedActions,
  functionResource,
  rolePolicyStatements,
  synthesizeApp,
  templateOf,
  variablesOf,
  type SynthesizedApp,
} from './synth-app.js';

const SENDER = 'invitations@review.example.com';
const users = FUNCTIONS.find((definition) => definition.name === 'users')!;
/** The auth function sends sign-in links (issue 30 part 2). */
const auth = FUNCTIONS.find((definition) => definition.name === 'auth')!;
const SENDERS = [users, auth];
const statementsOf = (synthesized: SynthesizedApp, definition = users) =>
  rolePolicyStatements(templateOf(synthesized, definition), functionIdOf(definition));
const identity = (name: string) => ({
  'Fn::Join': [
    '',
    ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:identity/${name}`],
  ],
});

describe('invitation and sign-in emails through SES (context emailSender; issue 11 item 7, issue 30 part 2)', () => {
  let withSender: SynthesizedApp;
  let withoutSender: SynthesizedApp;
  beforeAll(() => {
    withSender = synthesizeApp({ emailSender: SENDER });
    withoutSender = synthesizeApp();
  }, 240_000);

  it.each(SENDERS.map((definition) => [definition.name, definition] as const))(
    'passes the sender to the %s function and lets it send from that sender only',
    (_name, definition) => {
      const sending = statementsOf(withSender, definition).filter((statement) => allowedActions([statement], 'ses').length > 0);

      expect(definition.access.sendsEmail).toBe(true);
      expect(variablesOf(withSender, definition).EMAIL_SENDER).toBe(SENDER);
      expect(sending).toEqual([
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'ses:SendEmail',
          Resource: [identity(SENDER), identity('review.example.com')],
          Condition: { StringEquals: { 'ses:FromAddress': SENDER } },
        }),
      ]);
    },
  );

  it('gives no other function any SES action or the sender', () => {
    for (const definition of FUNCTIONS.filter((candidate) => !SENDERS.includes(candidate))) {
      const [, fn] = functionResource(templateOf(withSender, definition), definition);

      expect(allowedActions(statementsOf(withSender, definition), 'ses'), definition.name).toEqual([]);
      expect(Object.keys(fn.Properties?.Environment.Variables as object), definition.name).not.toContain('EMAIL_SENDER');
    }
  });

  it('sends nothing without a sender: no variable and no SES grant', () => {
    for (const definition of SENDERS) {
      expect(variablesOf(withoutSender, definition).EMAIL_SENDER, definition.name).toBeUndefined();
      expect(allowedActions(statementsOf(withoutSender, definition), 'ses'), definition.name).toEqual([]);
    }
  });

  it('refuses an emailSender that is not an email address', () => {
    expect(() => synthesizeApp({ emailSender: 'review.example.com' })).toThrow(/emailSender/);
  });
});

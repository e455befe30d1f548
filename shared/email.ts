import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { getSes } from './clients.js';
import { ConfigError, getConfig } from './config.js';

/** One plain-text email to one recipient. */
export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  /** Where replies go (the person on whose behalf the service writes). */
  replyTo?: string;
}

/** Control characters (line breaks included) never reach a header. */
const singleLine = (value: string) => value.replace(/\p{Cc}+/gu, ' ').trim();

/**
 * Sends through Amazon SES v2 (`SendEmail`) from the configured sender: the SES emulator locally,
 * SES when deployed, the same code path. Throws when SES refuses or no sender is configured; the
 * caller decides what an unsent email means.
 */
export async function sendEmail(email: OutgoingEmail): Promise<void> {
  const sender = getConfig().emailSender;
  if (!sender) throw new ConfigError('EMAIL_SENDER is not set: this deployment has no email sender (CDK context emailSender).');
  await getSes().send(
    new SendEmailCommand({
      FromEmailAddress: sender,
      Destination: { ToAddresses: [email.to] },
      ReplyToAddresses: email.replyTo ? [email.replyTo] : undefined,
      Content: {
        Simple: {
          Subject: { Data: singleLine(email.subject), Charset: 'UTF-8' },
          Body: { Text: { Data: email.text, Charset: 'UTF-8' } },
        },
      },
    }),
  );
}

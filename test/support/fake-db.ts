import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { useClients } from '../../shared/clients.js';

/** One command a module sent: its class name (`TransactWriteCommand`, `GetCommand`, …) and input. */
export interface SentCommand {
  name: string;
  input: Record<string, unknown>;
}

/**
 * A stand-in for the DynamoDB document client, handed in through the clients seam
 * (`useClients`, shared/clients.ts) so a unit test runs the domain's shell without emulators:
 * every command is recorded in `sent` and answered by `answer` (return the command's output, or
 * throw the error DynamoDB would). `restore` puts the real clients back (call it in `afterEach`).
 */
export function useFakeDb(answer: (command: SentCommand) => unknown): { sent: SentCommand[]; restore: () => void } {
  const sent: SentCommand[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const recorded = { name: command.constructor.name, input: command.input };
      sent.push(recorded);
      return (await answer(recorded)) ?? {};
    },
  };
  const restore = useClients({ db: client as unknown as DynamoDBDocumentClient });
  return { sent, restore };
}

import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { queueArrivalReader, type QueueArrival } from './sqs-requests.js';

export interface SqsFront {
  /** `http://127.0.0.1:<port>`: the SQS endpoint every client of the local stack uses. */
  url: string;
  /**
   * Fault injection for tests, in process only: unreachable resets every new connection and
   * destroys the open ones (keep-alive sockets included), so each SQS call fails as if the queue
   * service were down; reachable again takes connections as before. Messages already in the
   * emulator stay there.
   */
  setReachable(reachable: boolean): void;
  close(): Promise<void>;
}

/**
 * A TCP front before local-aws-sqs on a free loopback port: bytes pass through untouched (local-aws-sqs
 * finds queues by the name in the QueueUrl, not by host), and the front can be made unreachable.
 * It also reads the requests going by and calls `onArrival` after the answer to each that may make
 * a message receivable (a send, a visibility change, a move task), so idle pollers can wake at once.
 */
export async function startSqsFront(
  upstreamEndpoint: string,
  options: { onArrival?: (arrival: QueueArrival) => void } = {},
): Promise<SqsFront> {
  const upstream = new URL(upstreamEndpoint);
  const open = new Set<Socket>();
  let reachable = true;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };

  const server = createServer((client) => {
    if (!reachable) {
      client.resetAndDestroy();
      return;
    }
    const target = createConnection({ host: upstream.hostname, port: Number(upstream.port) });
    track(client);
    track(target);
    const { onArrival } = options;
    if (onArrival) {
      // Reported once the emulator answers (the SDK waits for each answer before its next request
      // on a socket), so a poller woken by it finds the message stored.
      const answered: QueueArrival[] = [];
      client.on(
        'data',
        queueArrivalReader((arrival) => answered.push(arrival)),
      );
      target.on('data', () => {
        for (const arrival of answered.splice(0)) onArrival(arrival);
      });
    }
    client.pipe(target);
    target.pipe(client);
    client.on('error', () => target.destroy());
    target.on('error', () => client.destroy());
    client.on('close', () => target.destroy());
    target.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setReachable(value) {
      reachable = value;
      if (!value) for (const socket of open) socket.destroy();
    },
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

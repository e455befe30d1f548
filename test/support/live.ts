import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { expect } from 'vitest';
import { call } from './api.js';

/** A message the live socket sent, parsed. */
export type LiveMessage =
  | { type: 'subscribed'; markupId: string; seq: number }
  | { type: 'event'; markupId: string; seq: number; event: any }
  | { type: 'error'; markupId: string | null; status: number; detail: string };

/** POST /live/tickets with `key` (any credential); expects 200. */
export async function liveTicket(key: string): Promise<{ url: string; expiresAt: string }> {
  const response = await call('POST', '/live/tickets', { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/**
 * A live-update client as a reviewer's would be (the `ws` package: Node 20 has no WebSocket): every
 * message kept in arrival order, waited for with a deadline, never a fixed sleep.
 */
export class LiveClient {
  readonly messages: LiveMessage[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as LiveMessage);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Opens the socket at `url`; rejects with the HTTP status when the upgrade is refused. */
  static open(url: string): Promise<LiveClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(new LiveClient(socket)));
      socket.once('unexpected-response', (_request, response: IncomingMessage) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () =>
          reject(Object.assign(new Error(`upgrade refused: ${response.statusCode} ${body}`), { status: response.statusCode, body })),
        );
      });
      socket.once('error', (error) => reject(error));
    });
  }

  /** A fresh ticket for `key` and a socket opened with it. */
  static async connect(key: string): Promise<LiveClient> {
    return LiveClient.open((await liveTicket(key)).url);
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /**
   * Waits until `done` holds of the messages received so far (or the deadline passed: then answers them anyway, for the assertion to say
   * what is missing).
   */
  async until(done: (messages: LiveMessage[]) => boolean, timeoutMs = 15_000): Promise<LiveMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.messages) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages;
  }

  /** Subscribes and waits for the answer to it (`subscribed` or `error` naming the markup). */
  async subscribe(markupId: string, after?: number): Promise<LiveMessage> {
    const seen = this.messages.length;
    this.send({ type: 'subscribe', markupId, ...(after === undefined ? {} : { after }) });
    const answer = (messages: LiveMessage[]) =>
      messages.slice(seen).find((message) => (message.type === 'subscribed' || message.type === 'error') && message.markupId === markupId);
    await this.until((messages) => answer(messages) !== undefined);
    const found = answer(this.messages);
    if (!found) throw new Error(`no answer to the subscribe of ${markupId}; got ${JSON.stringify(this.messages.slice(seen))}`);
    return found;
  }

  /** The event messages of a markup received so far. */
  events(markupId: string): Extract<LiveMessage, { type: 'event' }>[] {
    return this.messages.filter(
      (message): message is Extract<LiveMessage, { type: 'event' }> => message.type === 'event' && message.markupId === markupId,
    );
  }

  close(): void {
    this.socket.close();
  }
}

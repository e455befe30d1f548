import { Agent, request } from 'node:http';

export interface BenchResponse {
  status: number;
  body: string;
}

/**
 * The request rows' HTTP client: node:http on keep-alive sockets. The bench runs the handlers in its
 * own process, so the client shares their event loop, and what the client does there is charged
 * to the request. undici's `fetch` costs a handler about 1 ms of its own time that way (GET /workspace,
 * the handler timed inside the gateway: 3.6 ms behind fetch, 2.6 ms behind node:http, 2.5 ms called
 * directly; 2 cores): the cost of a client beside the service, not of the service, which the rows
 * compare with its DynamoDB floor. A deployed client runs elsewhere.
 */
export function benchClient(baseUrl: string, headers: Record<string, string>) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL(baseUrl);
  return {
    call(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<BenchResponse> {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      return new Promise((resolve, reject) => {
        const sent = request(
          {
            host: url.hostname,
            port: url.port,
            method,
            path,
            agent,
            headers: payload
              ? { ...headers, ...extraHeaders, 'content-type': 'application/json', 'content-length': String(payload.length) }
              : { ...headers, ...extraHeaders },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
            response.on('error', reject);
          },
        );
        sent.on('error', reject);
        sent.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}

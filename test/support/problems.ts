import { expect } from 'vitest';
import type { ApiResponse } from './api.js';

/** A problem+json answer with the given status; for a 400 naming `pointer`, that pointer is among its `errors`. */
export function expectProblem(response: ApiResponse, status: number, pointer?: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    requestId: expect.any(String),
  });
  if (pointer !== undefined) expect(response.body.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
}

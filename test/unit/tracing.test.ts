import { afterEach, describe, expect, it } from 'vitest';
import { getTracer, resetTracer, traced, traceWork } from '../../shared/tracing.js';

afterEach(() => {
  delete process.env.POWERTOOLS_TRACE_ENABLED;
  resetTracer();
});

describe('tracing: the Tracer only where POWERTOOLS_TRACE_ENABLED=true (CDK context tracing)', () => {
  it('is off by default: clients are handed back untouched and work is not wrapped', () => {
    const client = { middlewareStack: { add: () => undefined } };

    expect(getTracer()).toBeUndefined();
    expect(traced(client)).toBe(client);
    expect(() => traceWork('GET /api/v2/workspace', { route: 'GET /api/v2/workspace' })()).not.toThrow();
  });

  it("loads Powertools' Tracer when on, and outside Lambda (no segment) wraps nothing", () => {
    process.env.POWERTOOLS_TRACE_ENABLED = 'true';

    const tracer = getTracer();
    expect(tracer?.constructor.name).toBe('Tracer');
    expect(getTracer()).toBe(tracer);
    expect(() => traceWork('GET /api/v2/workspace', { route: 'GET /api/v2/workspace' })(new Error('boom'))).not.toThrow();
  });
});

import { createRequire } from 'node:module';
import type { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * X-Ray tracing through Powertools for AWS Lambda's Tracer, only where the operator turned it on
 * (CDK context `tracing`: active tracing, the tracing layer and POWERTOOLS_TRACE_ENABLED=true on
 * every function). The Tracer and the X-Ray SDK come from that layer, loaded at run time through
 * `require` (as the converters are): they are in no bundle, so functions without tracing neither
 * carry nor load them, and their cold starts stay as they are. Locally it is never on.
 */
const TRACING_PACKAGE = '@aws-lambda-powertools/tracer';
const require = createRequire(import.meta.url);
let tracer: Tracer | null | undefined;

/** The process's Tracer, or undefined when tracing is off. */
export function getTracer(): Tracer | undefined {
  if (tracer === undefined) {
    tracer =
      process.env.POWERTOOLS_TRACE_ENABLED === 'true'
        ? new (require(TRACING_PACKAGE) as typeof import('@aws-lambda-powertools/tracer')).Tracer({
            serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'review-board-service',
          })
        : null;
  }
  return tracer ?? undefined;
}

/** The client with its calls traced as X-Ray subsegments when tracing is on; the client itself otherwise. */
export function traced<T>(client: T): T {
  return getTracer()?.captureAWSv3Client(client) ?? client;
}

type Subsegment = ReturnType<NonNullable<ReturnType<Tracer['getSegment']>>['addNewSubsegment']>;

/**
 * Opens a subsegment for one unit of work (`## <route key>`) annotated with `route`, cold start and
 * service, and answers the function that closes it (recording `error`, if any). Does nothing when
 * tracing is off.
 */
export function traceWork(name: string, annotations: Record<string, string>): (error?: unknown) => void {
  const active = getTracer();
  const parent = active?.getSegment();
  if (!active || !parent) return () => undefined;
  const subsegment: Subsegment = parent.addNewSubsegment(`## ${name}`);
  active.setSegment(subsegment);
  active.annotateColdStart();
  active.addServiceNameAnnotation();
  for (const [key, value] of Object.entries(annotations)) active.putAnnotation(key, value);
  return (error?: unknown) => {
    if (error instanceof Error) active.addErrorAsMetadata(error);
    subsegment.close();
    active.setSegment(parent);
  };
}

/** Forgets the Tracer, so the next use reads the environment again (tests). */
export function resetTracer(): void {
  tracer = undefined;
}

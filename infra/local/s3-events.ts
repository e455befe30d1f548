/** ObjectCreated notifications of the local S3 front, shaped like AWS's (s3rver's are not). */
import { createHash } from 'node:crypto';
import type { S3Event } from 'aws-lambda';

export type ObjectCreatedEventName =
  'ObjectCreated:Post' | 'ObjectCreated:Put' | 'ObjectCreated:Copy' | 'ObjectCreated:CompleteMultipartUpload';

export interface ObjectCreatedDetails {
  eventName: ObjectCreatedEventName;
  region: string;
  bucket: string;
  key: string;
  size: number;
  eTag: string;
  principalAccessKeyId: string | undefined;
  ownerAccessKeyId: string;
  sourceIp: string;
  requestId: string;
  hostId: string;
}

export function objectCreatedEvent(details: ObjectCreatedDetails): S3Event {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: details.region,
        eventTime: new Date().toISOString(),
        eventName: details.eventName,
        userIdentity: { principalId: details.principalAccessKeyId === undefined ? 'Anonymous' : `AWS:${details.principalAccessKeyId}` },
        requestParameters: { sourceIPAddress: details.sourceIp },
        responseElements: { 'x-amz-request-id': details.requestId, 'x-amz-id-2': details.hostId },
        s3: {
          s3SchemaVersion: '1.0',
          configurationId: 'local-s3-front',
          bucket: {
            name: details.bucket,
            ownerIdentity: { principalId: canonicalIdOf(details.ownerAccessKeyId) },
            arn: `arn:aws:s3:::${details.bucket}`,
          },
          object: {
            key: encodeEventKey(details.key),
            size: details.size,
            eTag: details.eTag.replaceAll('"', ''),
            sequencer: nextSequencer(),
          },
        },
      },
    ],
  };
}

/**
 * S3 event keys are form-urlencoded (space as `+`, `/` kept, everything outside
 * `A-Z a-z 0-9 - _ . *` percent-encoded as UTF-8), which is why handlers must
 * decode them; the emulator has to encode them too or that decoding goes untested.
 */
function encodeEventKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/[!'()~]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+')
    .replaceAll('%2F', '/');
}

let lastSequencer = 0n;

/** S3 sequencers only grow for a given key; a time-based counter keeps that true within one process. */
function nextSequencer(): string {
  const candidate = BigInt(Date.now()) * 1000n;
  lastSequencer = candidate > lastSequencer ? candidate : lastSequencer + 1n;
  return lastSequencer.toString(16).toUpperCase().padStart(18, '0');
}

function canonicalIdOf(accessKeyId: string): string {
  return createHash('sha256').update(accessKeyId).digest('hex').slice(0, 14).toUpperCase();
}

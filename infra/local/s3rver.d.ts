/**
 * s3rver 3.x ships no type declarations; this covers only the surface the local
 * stack and its tests use, so a typo in an option is still a compile error.
 */
declare module 's3rver' {
  interface S3rverBucketConfig {
    name: string;
    /** CORS or website configuration XML documents. */
    configs?: Array<string | Buffer>;
  }

  interface S3rverOptions {
    address?: string;
    /** 0 asks the OS for a free port; read the real one from the value `run()` resolves to. */
    port?: number;
    silent?: boolean;
    /** Where objects are persisted, one sub-directory per bucket. */
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    /** When true (the default), a non-IP, non-localhost Host header is taken as a bucket name. */
    vhostBuckets?: boolean;
    serviceEndpoint?: string;
    configureBuckets?: S3rverBucketConfig[];
  }

  class S3rver {
    constructor(options?: S3rverOptions);
    /** Creates the configured buckets, then listens. */
    run(): Promise<import('node:net').AddressInfo>;
    close(): Promise<void>;
    reset(): void;
    on(event: 'event', listener: (event: import('aws-lambda').S3Event) => void): this;
  }

  export = S3rver;
}

import { describe, expect, it } from 'vitest';
import { sizeOf } from '../../web/board/sizes.js';

describe('attachment sizes in the thread dialog', () => {
  it('says bytes under 1 KB, then KB, then MB', () => {
    expect([0, 1, 11, 1023, 1024, 1536, 1024 * 1024 - 1, 5 * 1024 * 1024].map(sizeOf)).toEqual([
      '0 bytes',
      '1 byte',
      '11 bytes',
      '1023 bytes',
      '1 KB',
      '2 KB',
      '1.0 MB',
      '5.0 MB',
    ]);
  });
});

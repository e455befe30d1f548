import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ConversionError } from '../../shared/convert/errors.js';
import { makeScreenshotThumbnail } from '../../shared/convert/screenshots.js';
import { screenshotThumbnailKey } from '../../shared/db/screenshots.js';

const picture = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: { r: 20, g: 160, b: 90, alpha: channels === 4 ? 0.5 : 1 } } })
    .png()
    .toBuffer();

describe('makeScreenshotThumbnail: the whole screenshot fitted inside 400x300 (Resources: Screenshot, conversion worker)', () => {
  it('scales a 1600x1200 screenshot down to 400x300 as JPEG', async () => {
    const thumbnail = await makeScreenshotThumbnail(await picture(1600, 1200));

    expect(thumbnail).toMatchObject({ mimeType: 'image/jpeg', width: 400, height: 300 });
    expect(await sharp(thumbnail.data).metadata()).toMatchObject({ format: 'jpeg', width: 400, height: 300 });
  });

  it('keeps the aspect ratio of a tall page screenshot without cropping it', async () => {
    const thumbnail = await makeScreenshotThumbnail(await picture(1000, 5000));

    expect(thumbnail).toMatchObject({ width: 60, height: 300 });
  });

  it('never enlarges a screenshot smaller than the box', async () => {
    const thumbnail = await makeScreenshotThumbnail(await picture(120, 80));

    expect(thumbnail).toMatchObject({ width: 120, height: 80 });
  });

  it('keeps transparency by staying PNG', async () => {
    const thumbnail = await makeScreenshotThumbnail(await picture(800, 600, 4));

    expect(thumbnail).toMatchObject({ mimeType: 'image/png', width: 400, height: 300 });
    expect(await sharp(thumbnail.data).metadata()).toMatchObject({ format: 'png', hasAlpha: true });
  });

  it('refuses bytes that are not an image with a ConversionError (a final failure, not retried)', async () => {
    await expect(makeScreenshotThumbnail(Buffer.from('this is not a PNG at all'))).rejects.toBeInstanceOf(ConversionError);
  });

  it('refuses a truncated PNG with a ConversionError', async () => {
    const whole = await picture(300, 200);

    await expect(makeScreenshotThumbnail(whole.subarray(0, Math.floor(whole.length / 2)))).rejects.toBeInstanceOf(ConversionError);
  });
});

describe('screenshotThumbnailKey', () => {
  it('puts thumbnails outside uploads/, one fixed key per screenshot', () => {
    const key = screenshotThumbnailKey('m', 't', 's', 'jpg');

    expect(key).toBe('markups/m/threads/t/screenshots/s/thumbnail.jpg');
    expect(key.startsWith('uploads/')).toBe(false);
  });
});

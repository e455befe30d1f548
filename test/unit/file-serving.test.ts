import { describe, expect, it } from 'vitest';
import { contentDispositionOf, servingOf } from '../../shared/storage/serving.js';

describe('file serving: raster images, PDF and video inline, everything else an attachment (DESIGN: files cannot script)', () => {
  it.each([
    ['image/png', 'image/png'],
    ['image/jpeg', 'image/jpeg'],
    ['image/jpg', 'image/jpeg'],
    ['image/gif', 'image/gif'],
    ['image/webp', 'image/webp'],
    ['image/bmp', 'image/bmp'],
    ['application/pdf', 'application/pdf'],
    ['video/mp4', 'video/mp4'],
    ['video/webm', 'video/webm'],
    ['video/quicktime', 'video/quicktime'],
    ['IMAGE/PNG', 'image/png'],
    ['  image/png  ', 'image/png'],
    ['image/png; charset=utf-7', 'image/png'],
    ['Application/PDF ; name="x.html"', 'application/pdf'],
  ])('serves %j inline as %s, without its parameters', (contentType, served) => {
    expect(servingOf(contentType)).toEqual({ disposition: 'inline', contentType: served });
  });

  it.each([
    ['image/svg+xml', 'image/svg+xml'],
    [' Image/SVG+XML; charset=utf-7', 'image/svg+xml'],
    ['image/tiff', 'image/tiff'],
    ['application/postscript', 'application/postscript'],
  ])('serves %j as an attachment, keeping the known type %s (an SVG <img> still shows)', (contentType, served) => {
    expect(servingOf(contentType)).toEqual({ disposition: 'attachment', contentType: served });
  });

  it.each([
    'text/html',
    'TEXT/HTML',
    'text/html; charset=utf-7',
    ' text/html ;charset=utf-7',
    'application/xhtml+xml',
    'application/xml',
    'text/xml',
    'application/javascript',
    'text/javascript',
    'text/plain',
    'text/css',
    'application/octet-stream',
    'application/x-unknown',
    'image/png, text/html',
    'image/pngx',
    'image/png/../svg+xml',
    'image/',
    'image',
    'video/',
    '',
    ';image/png',
  ])('serves %j as an octet-stream attachment', (contentType) => {
    expect(servingOf(contentType)).toEqual({ disposition: 'attachment', contentType: 'application/octet-stream' });
  });

  it('names the download in an RFC 6266 filename* that no file name can break out of', () => {
    expect(contentDispositionOf('inline')).toBe('inline');
    expect(contentDispositionOf('attachment')).toBe('attachment');
    expect(contentDispositionOf('attachment', 'a "b";\r\nX-Evil: 1.html')).toBe(
      "attachment; filename*=UTF-8''a%20%22b%22%3B%0D%0AX-Evil%3A%201.html",
    );
    expect(contentDispositionOf('attachment', "it's (1)*.txt")).toBe("attachment; filename*=UTF-8''it%27s%20%281%29%2A.txt");
  });
});

import { describe, expect, it } from 'vitest';
import { isAppPath } from '../../shared/http/web-app.js';
import { markupGroups } from '../../web/app/markup-groups.js';

describe("the review app's browsing paths", () => {
  it('serves a folder page, /workspaces/{workspaceId}/folders/{folderId}, as an app path (index.html), locally and behind CloudFront', () => {
    expect(isAppPath('/workspaces/11111111-1111-4111-8111-111111111111/folders/33333333-3333-4333-8333-333333333333')).toBe(true);
  });
});

describe('markupGroups: files as POST /markups/from-files takes them', () => {
  const file = (name: string, type: string) => ({ name, type });

  it('puts every displayable image into one image markup and gives any other file a markup of its own', () => {
    const a = file('a.png', 'image/png');
    const b = file('b.jpg', 'image/jpeg');
    const pdf = file('plan.pdf', 'application/pdf');
    const video = file('clip.mp4', 'video/mp4');
    const tiff = file('scan.tif', 'image/tiff');

    expect(markupGroups([a, pdf, b, video, tiff])).toEqual([[a, b], [pdf], [video], [tiff]]);
    expect(markupGroups([pdf])).toEqual([[pdf]]);
    expect(markupGroups([])).toEqual([]);
  });
});

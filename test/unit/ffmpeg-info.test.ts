import { describe, expect, it } from 'vitest';
import { canRemux, parseFfmpegInfo } from '../../shared/convert/video.js';

describe('video (ffmpeg): the stream description ffmpeg prints, read without running it', () => {
  it('parses the stream descriptions of older and newer ffmpeg releases', () => {
    const newer = parseFfmpegInfo(
      [
        "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'IMG_0001.MOV':",
        '  Duration: 00:01:02.50, start: 0.000000, bitrate: 9000 kb/s',
        '  Stream #0:0[0x1](und): Video: hevc (Main) (hvc1 / 0x31637668), yuv420p(tv, bt709), 1920x1080, 8000 kb/s, 29.97 fps, 600 tbn (default)',
        '    Side data:',
        '      displaymatrix: rotation of -90.00 degrees',
        '  Stream #0:1[0x2](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, stereo, fltp, 160 kb/s (default)',
        '  Stream #0:2[0x3](und): Data: none (mebx / 0x7862656D), 0 kb/s (default)',
      ].join('\n'),
    );
    const older = parseFfmpegInfo(
      [
        "Input #0, avi, from 'clip.avi':",
        '  Duration: N/A, bitrate: N/A',
        '    Stream #0:0: Video: mpeg4 (Simple Profile) (FMP4 / 0x34504D46), yuv420p, 321x241 [SAR 1:1 DAR 321:241], 475 kb/s, 25 fps',
        '    Stream #0:1: Audio: mp3 (U[0][0][0] / 0x0055), 44100 Hz, mono, fltp, 64 kb/s',
      ].join('\n'),
    );

    expect(newer).toEqual({
      container: 'mov,mp4,m4a,3gp,3g2,mj2',
      durationSeconds: 62.5,
      video: { codec: 'hevc', pixelFormat: 'yuv420p', width: 1920, height: 1080, rotation: 90 },
      audio: { codec: 'aac' },
    });
    expect(canRemux(newer!)).toBe(false);
    expect(older).toEqual({ container: 'avi', video: { codec: 'mpeg4', pixelFormat: 'yuv420p', width: 321, height: 241, rotation: 0 }, audio: { codec: 'mp3' } });
    expect(parseFfmpegInfo('/tmp/x: Invalid data found when processing input')).toBeUndefined();
  });
});

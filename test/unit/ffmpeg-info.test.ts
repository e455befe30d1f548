import { describe, expect, it } from 'vitest';
import { canRemux, isUnsupportedFormat, parseFfmpegInfo, progressTimes } from '../../shared/convert/video.js';

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
    expect(older).toEqual({
      container: 'avi',
      video: { codec: 'mpeg4', pixelFormat: 'yuv420p', width: 321, height: 241, rotation: 0 },
      audio: { codec: 'mp3' },
    });
    expect(parseFfmpegInfo('/tmp/x: Invalid data found when processing input')).toBeUndefined();
  });

  it('parses what our FFmpeg 7.1.5 build prints for a rotated H.264 MOV without audio', () => {
    const info = parseFfmpegInfo(
      [
        "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'rotated.mov':",
        '  Metadata:',
        '    major_brand     : qt  ',
        '    encoder         : Lavf61.7.100',
        '  Duration: 00:00:02.00, start: 0.000000, bitrate: 50 kb/s',
        '  Stream #0:0[0x1]: Video: h264 (High) (avc1 / 0x31637661), yuv420p(progressive), 320x240 [SAR 1:1 DAR 4:3], 45 kb/s, 25 fps, 25 tbr, 12800 tbn (default)',
        '      Metadata:',
        '        handler_name    : VideoHandler',
        '        vendor_id       : FFMP',
        '      Side data:',
        '        displaymatrix: rotation of 90.00 degrees',
        'At least one output file must be specified',
      ].join('\n'),
    );

    expect(info).toEqual({
      container: 'mov,mp4,m4a,3gp,3g2,mj2',
      durationSeconds: 2,
      video: { codec: 'h264', pixelFormat: 'yuv420p', width: 320, height: 240, rotation: 270 },
    });
    expect(canRemux(info!)).toBe(true);
  });

  it('tells a file no allowed demuxer takes from a recognised but broken one', () => {
    const opening = ['Error opening input file /tmp/w/input.', 'Error opening input files: Invalid data found when processing input'];
    const playlist = ['[in#0 @ 0x31a6cb00] Error opening input: Invalid data found when processing input', ...opening].join('\n');
    const byName = [
      '[mov,mp4,m4a,3gp,3g2,mj2 @ 0x31a6ce80] Format mov,mp4,m4a,3gp,3g2,mj2 detected only with low score of 1, misdetection possible!',
      '[mov,mp4,m4a,3gp,3g2,mj2 @ 0x31a6ce80] moov atom not found',
      playlist,
    ].join('\n');
    const whitelisted = "[hls @ 0x5555] Format hls is not on whitelist 'mov,matroska'\n/tmp/w/input: Format not on whitelist";
    const corrupt = [
      '[mov,mp4,m4a,3gp,3g2,mj2 @ 0x1d06be80] moov atom not found',
      '[in#0 @ 0x1d06bb00] Error opening input: Invalid data found when processing input',
      ...opening,
    ].join('\n');

    expect(isUnsupportedFormat(playlist)).toBe(true);
    expect(isUnsupportedFormat(byName)).toBe(true);
    expect(isUnsupportedFormat(whitelisted)).toBe(true);
    expect(isUnsupportedFormat(corrupt)).toBe(false);
  });
});

describe('video (ffmpeg): the progress lines of a transcode', () => {
  it('reads the output time of every status line in a chunk, skipping those before the first frame', () => {
    const chunk =
      'frame=    0 fps=0.0 q=0.0 size=       0KiB time=N/A bitrate=N/A speed=N/A    \r' +
      'frame=   31 fps= 30 q=29.0 size=     256KiB time=00:00:01.23 bitrate=1704.2kbits/s speed=1.2x    \r' +
      'frame= 1864 fps= 60 q=29.0 size=   25600KiB time=01:02:03.50 bitrate=1704.2kbits/s speed=2x    \r';
    expect(progressTimes(chunk)).toEqual([1.23, 3723.5]);
    expect(progressTimes('[mp4 @ 0x55] Starting second pass: moving the moov atom to the beginning of the file')).toEqual([]);
  });
});

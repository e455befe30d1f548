import { spawn } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFailure } from '../errors.js';
import { ConversionError } from './errors.js';
import type { ConverterInput, RenderedImage } from './images.js';
import { CONVERSION_LIMITS } from './limits.js';
import { ffmpegPath, loadSharp, readyFfmpegPath } from './packages.js';

/** What `ffmpeg -i` says about a file (our ffmpeg build has no ffprobe). */
export interface MediaInfo {
  /** Demuxer names, e.g. `mov,mp4,m4a,3gp,3g2,mj2` or `matroska,webm`. */
  container: string;
  durationSeconds?: number;
  video?: {
    codec: string;
    pixelFormat?: string;
    /** Coded size, before rotation. */
    width: number;
    height: number;
    /** Display rotation stored in the container, in degrees clockwise (0, 90, 180, 270). */
    rotation: number;
  };
  audio?: { codec: string };
}

export interface VideoConversion {
  /** The web-playable MP4 (H.264 + AAC, yuv420p, even dimensions, moov atom first). */
  file: { path: string; mimeType: 'video/mp4'; filesize: number };
  durationSeconds: number;
  /** Display size in pixels (rotation applied). */
  width: number;
  height: number;
  poster: RenderedImage;
  /** True when the source was already web-playable H.264/AAC and was only remuxed. */
  remuxed: boolean;
}

export interface VideoOptions {
  /** Longest side of a re-encoded video. */
  maxDimension?: number;
  /** The whole conversion is stopped after this (a Lambda has 300 s for the job). */
  timeoutMs?: number;
  /** The ffmpeg to run; by default readyFfmpegPath()'s (the build of infra/tools/build-ffmpeg.sh). */
  ffmpeg?: string;
  /** A longer video is refused from the duration its container declares, before it is transcoded. */
  maxDurationSeconds?: number;
  /** Called as the transcode advances (0–100, from ffmpeg's `time=` against the duration), at most once per whole percent. */
  onProgress?: (percent: number) => void;
}

export const MAX_VIDEO_DIMENSION = 1920;

/**
 * The demuxers ffmpeg may use: the spec's video containers (mp4/mov, webm/mkv, avi, wmv, mxf) and
 * the camera formats next to them. Everything else is refused, above all playlists and scripts
 * (hls, concat, image sequences): an uploaded `.mp4` that is really an HLS playlist would make the
 * worker fetch any URL it names, or read local files such as /proc/self/environ into the video.
 * Only the `file` protocol is allowed for the same reason.
 */
const DEMUXERS = 'mov,matroska,webm,avi,asf,mxf,mpegts,mpeg,flv,ogg';
const SUPPORTED = 'mp4, mov, webm, avi, wmv, mkv, mxf';
/** Sources already playable in browsers are kept as they are up to this size (4K). */
const MAX_REMUX_DIMENSION = 4096;
const DEFAULT_TIMEOUT_MS = 240_000;

/**
 * Makes a web-playable MP4 and a poster frame (JPEG, at 1 s or the first frame of shorter videos)
 * from any video ffmpeg reads (mp4, mov, webm, avi, wmv, mkv, mxf, ...), in `workDir`.
 *
 * H.264/yuv420p/AAC sources in MP4/MOV are remuxed (seconds, not minutes, for phone videos);
 * anything else is re-encoded with x264 (veryfast, CRF 23, at most 8 Mbit/s) and AAC, scaled down to
 * MAX_VIDEO_DIMENSION and to even dimensions with square pixels; rotation is applied. Duration and
 * size are read back from the MP4 produced, so they describe what is served. A video over the
 * duration limit is refused from its container's duration, before anything is transcoded.
 */
export async function convertVideo(input: ConverterInput, workDir: string, options: VideoOptions = {}): Promise<VideoConversion> {
  // Locally this may wait for the local stack's build of ffmpeg; the time limit starts after it.
  const ffmpeg = options.ffmpeg ?? (await readyFfmpegPath());
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let source = input;
  if (typeof source !== 'string') {
    source = join(workDir, 'input');
    await writeFile(source, input);
  }
  const info = await probeMedia(source, { ffmpeg });
  if (!info.video) throw new ConversionError('The file has no video stream.');
  const maxSeconds = options.maxDurationSeconds ?? CONVERSION_LIMITS.maxVideoSeconds;
  if (info.durationSeconds !== undefined && info.durationSeconds > maxSeconds) {
    throw new ConversionError(`The video is ${spoken(info.durationSeconds)} long; at most ${spoken(maxSeconds)} are converted.`);
  }
  const output = join(workDir, 'video.mp4');
  const remux = canRemux(info);
  const maxDimension = options.maxDimension ?? MAX_VIDEO_DIMENSION;
  const args = remux
    ? ['-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy']
    : [
        '-map',
        '0:v:0',
        '-map',
        '0:a:0?',
        // Square pixels, longest side at most maxDimension, both sides even (yuv420p needs it).
        '-vf',
        `scale=w='trunc(iw*sar*min(1,${maxDimension}/max(iw*sar,ih))/2)*2':h='trunc(ih*min(1,${maxDimension}/max(iw*sar,ih))/2)*2',setsar=1`,
        // CRF 23 with a bitrate ceiling: grainy footage would otherwise come out at 150 Mbit/s.
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '23',
        '-maxrate',
        '8M',
        '-bufsize',
        '16M',
        '-profile:v',
        'high',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-b:a',
        '128k',
        '-ac',
        '2',
      ];
  const onTime = progressReporter(info.durationSeconds, options.onProgress);
  const transcoded = await runFfmpeg(
    ffmpeg,
    ['-i', source, ...args, '-movflags', '+faststart', '-max_muxing_queue_size', '1024', '-f', 'mp4', output],
    remaining(deadline),
    onTime,
  );
  if (transcoded.code !== 0) throw new ConversionError(`The video could not be converted: ${ffmpegReason(transcoded.stderr, source)}`);

  const produced = await probeMedia(output, { ffmpeg });
  if (!produced.video) throw new ConversionError('The video could not be converted: no video stream was produced.');
  const durationSeconds = produced.durationSeconds ?? info.durationSeconds;
  if (durationSeconds === undefined) throw new ConversionError('The duration of the video could not be read.');
  const sideways = produced.video.rotation % 180 !== 0;
  const poster = await extractPoster(ffmpeg, output, join(workDir, 'poster.jpg'), durationSeconds, deadline);
  return {
    file: { path: output, mimeType: 'video/mp4', filesize: (await stat(output)).size },
    durationSeconds: Math.round(durationSeconds * 1000) / 1000,
    width: sideways ? produced.video.height : produced.video.width,
    height: sideways ? produced.video.width : produced.video.height,
    poster,
    remuxed: remux,
  };
}

/** True when browsers play the source as it is once it sits in an MP4 with the index first. */
export function canRemux(info: MediaInfo): boolean {
  const video = info.video;
  if (!video || !/\b(mp4|mov)\b/.test(info.container)) return false;
  return (
    video.codec === 'h264' &&
    video.pixelFormat === 'yuv420p' &&
    video.width % 2 === 0 &&
    video.height % 2 === 0 &&
    Math.max(video.width, video.height) <= MAX_REMUX_DIMENSION &&
    (info.audio === undefined || info.audio.codec === 'aac')
  );
}

/** Reads a media file's container, duration and first video and audio streams with `ffmpeg -i`. */
export async function probeMedia(path: string, options: { ffmpeg?: string; timeoutMs?: number } = {}): Promise<MediaInfo> {
  const result = await runFfmpeg(options.ffmpeg ?? ffmpegPath(), ['-i', path], options.timeoutMs ?? 30_000);
  const info = parseFfmpegInfo(result.stderr);
  if (info) return info;
  if (isUnsupportedFormat(result.stderr)) throw new ConversionError(`The file is not a video in a supported format (${SUPPORTED}).`);
  throw new ConversionError(`The file is not a video ffmpeg can read: ${ffmpegReason(result.stderr, path)}`);
}

/**
 * True when ffmpeg failed to open a file because no allowed demuxer took it: it was refused by
 * the whitelist (`Format not on whitelist`), or no demuxer claimed it (a playlist, a script, random
 * bytes: our build has no demuxer outside the whitelist, so nothing speaks before the input
 * context gives up), or one claimed it only by its last resort, the file name (`detected only with
 * low score`). A file that a demuxer recognised and then found broken is not unsupported but corrupt.
 */
export function isUnsupportedFormat(stderr: string): boolean {
  if (/Format not on whitelist|detected only with low score/.test(stderr)) return true;
  return !/^\[(?!in#|out#)[^\]\n]+ @ 0x[0-9a-f]+\] /m.test(stderr);
}

/**
 * Parses the input description ffmpeg prints on stderr. Stream lines look like
 * `Stream #0:0(und): Video: h264 (High) (avc1 / 0x31637661), yuv420p(tv, bt709), 1920x1080 [SAR 1:1 DAR 16:9], ...`
 * and rotation appears as `rotate : 90` metadata or `displaymatrix: rotation of -90.00 degrees`
 * side data below the stream. Undefined when there is no `Input #0`.
 */
export function parseFfmpegInfo(stderr: string): MediaInfo | undefined {
  const input = /^Input #0, (.+?), from /m.exec(stderr);
  if (!input) return undefined;
  const info: MediaInfo = { container: input[1]! };
  const duration = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(stderr);
  if (duration) info.durationSeconds = Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]);
  const streams = stderr.split(/^(?=\s*Stream #0:)/m).slice(1);
  for (const block of streams) {
    const header = /^\s*Stream #0:\d+\S*: (Video|Audio): ([^\s,]+)(.*)$/m.exec(block);
    if (!header) continue;
    const [, kind, codec, rest = ''] = header;
    if (kind === 'Audio') {
      info.audio ??= { codec: codec! };
      continue;
    }
    // Attached cover art (mp3/m4a) is not a video.
    if (info.video || /\(attached pic\)/.test(rest)) continue;
    // Without the parenthesised details (profile, codec tag, colour range), fields are comma-separated:
    // `, yuv420p, 1920x1080 [SAR 1:1 DAR 16:9], 29.97 fps, ...`.
    let plain = rest;
    while (/\([^()]*\)/.test(plain)) plain = plain.replace(/\([^()]*\)/g, '');
    const size = /(?:^|[\s,])(\d{1,5})x(\d{1,5})(?=[\s,[]|$)/.exec(plain);
    if (!size) continue;
    const pixelFormat = plain.split(',')[1]?.trim();
    info.video = {
      codec: codec!,
      ...(pixelFormat && /^[a-z][a-z0-9_]*$/.test(pixelFormat) ? { pixelFormat } : {}),
      width: Number(size[1]),
      height: Number(size[2]),
      rotation: rotationOf(block),
    };
  }
  return info;
}

function rotationOf(block: string): number {
  const tag = /^\s*rotate\s*:\s*(-?\d+(?:\.\d+)?)/m.exec(block);
  // The display matrix counts counter-clockwise; the rotate tag clockwise.
  const matrix = /displaymatrix: rotation of (-?\d+(?:\.\d+)?) degrees/.exec(block);
  const degrees = tag ? Number(tag[1]) : matrix ? -Number(matrix[1]) : 0;
  return (((Math.round(degrees / 90) * 90) % 360) + 360) % 360;
}

async function extractPoster(
  ffmpeg: string,
  video: string,
  target: string,
  durationSeconds: number,
  deadline: number,
): Promise<RenderedImage> {
  const sharp = loadSharp();
  for (const at of durationSeconds > 1.5 ? [1, 0] : [0]) {
    const result = await runFfmpeg(
      ffmpeg,
      ['-ss', String(at), '-i', video, '-frames:v', '1', '-q:v', '2', '-f', 'image2', '-c:v', 'mjpeg', target],
      remaining(deadline),
    );
    if (result.code !== 0) continue;
    const data = await readFile(target).catch(() => Buffer.alloc(0));
    if (data.length === 0) continue;
    try {
      const { width, height } = await sharp(data).metadata();
      if (width && height) return { data, mimeType: 'image/jpeg', width, height };
    } catch {
      // try the first frame
    }
  }
  throw new ConversionError('No frame of the video could be extracted for its poster.');
}

/** A duration as users read it: seconds below two minutes, else whole minutes. */
const spoken = (seconds: number) => (seconds < 120 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} minutes`);

const remaining = (deadline: number) => {
  const left = deadline - Date.now();
  if (left <= 0) throw new ConversionError('The video took too long to convert.');
  return left;
};

/** The last thing ffmpeg said before failing, without the temporary path of the file. */
function ffmpegReason(stderr: string, path: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !/^(frame=|size=|Press \[q\]|At least one output file)/.test(line));
  const line = lines.at(-1) ?? 'ffmpeg failed';
  // FFmpeg 7 ends with `Error opening input files: <reason>`, FFmpeg 4 with `<path>: <reason>`.
  return line
    .replaceAll(path, 'the file')
    .replace(/^the file: /, '')
    .replace(/^Error opening (?:input|output) files?: /, '')
    .slice(0, 300);
}

/**
 * The output times of ffmpeg's progress lines in a chunk of its stderr (`… time=00:01:02.50 …`, one
 * per `\r`-ended status line; `time=N/A` before the first frame is skipped). A line split between
 * chunks is at worst missed once: the next status line comes half a second later.
 */
export function progressTimes(chunk: string): number[] {
  return [...chunk.matchAll(/\btime=(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/g)].map(
    ([, hours, minutes, seconds]) => Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds),
  );
}

/** Turns output times into whole percents of `durationSeconds`, reporting each rise once (nothing without a duration). */
function progressReporter(
  durationSeconds: number | undefined,
  onProgress: ((percent: number) => void) | undefined,
): ((seconds: number) => void) | undefined {
  if (!onProgress || !durationSeconds || durationSeconds <= 0) return undefined;
  let reported = -1;
  return (seconds) => {
    const percent = Math.min(100, Math.floor((seconds / durationSeconds) * 100));
    if (percent <= reported) return;
    reported = percent;
    onProgress(percent);
  };
}

interface FfmpegResult {
  code: number | null;
  stderr: string;
}

/**
 * Runs ffmpeg quietly and keeps the last 64 KiB of its stderr. Killed after `timeoutMs`, which is a
 * ConversionError (the file is too long or too heavy; retrying would not help); failing to start
 * ffmpeg at all is an infrastructure error.
 */
function runFfmpeg(ffmpeg: string, args: string[], timeoutMs: number, onTime?: (seconds: number) => void): Promise<FfmpegResult> {
  return new Promise((resolve, reject) => {
    const inputOptions = ['-protocol_whitelist', 'file', '-format_whitelist', DEMUXERS];
    const child = spawn(ffmpeg, ['-hide_banner', '-nostdin', '-y', '-loglevel', 'info', ...inputOptions, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let timedOut = false;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (onTime) for (const seconds of progressTimes(chunk)) onTime(seconds);
      stderr += chunk;
      if (stderr.length > 128 * 1024) stderr = stderr.slice(-64 * 1024);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`ffmpeg could not be started (${ffmpeg}): ${describeFailure(error)}`, { cause: error }));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (timedOut) reject(new ConversionError(`The video took longer than ${Math.round(timeoutMs / 1000)} s to convert.`));
      else resolve({ code, stderr });
    });
  });
}

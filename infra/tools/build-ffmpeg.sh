#!/usr/bin/env bash
# Builds the conversion worker's ffmpeg: FFmpeg 7.1 with x264, static (no shared library beyond the
# kernel's interface), from the source tarballs Debian 13 ships, checked against pinned SHA-256
# sums. Needs only gcc, make, curl, tar and xz (nasm is built here too, so no root and no apt).
#
#   infra/tools/build-ffmpeg.sh [--if-missing]
#
# The binary lands in .converters/ffmpeg/bin/ffmpeg (ignored by git, kept across `npm ci`), with
# .converters/ffmpeg/BUILD, the SHA-256 of this script: a changed script (version, flags) rebuilds.
# shared/convert/packages.ts runs it locally and infra/constructs/converters-layer.ts ships it.
# --if-missing (npm's postinstall) returns at once when that build is there, and never fails the
# install: without ffmpeg, video conversion fails with a reason that names `npm run converters:ffmpeg`.
#
# Licence: FFmpeg with x264 is GPL-2.0-or-later, run as a separate program (never linked into the
# worker). Only the demuxers, decoders and filters the converter uses are compiled in (see
# shared/convert/video.ts); no network protocol, no device, no hardware acceleration.
set -euo pipefail

FFMPEG_VERSION=7.1.5
NASM_VERSION=2.16.03
X264_VERSION=0.164.3108+git31e19f9
POOL=${DEBIAN_POOL:-http://deb.debian.org/debian/pool/main}
declare -A SOURCES=(
  [ffmpeg]="f/ffmpeg/ffmpeg_${FFMPEG_VERSION}.orig.tar.xz de668509caf9e35e3cd162473441fdb29538c6d96ed080292b3cf9e6fc5d558f"
  [nasm]="n/nasm/nasm_${NASM_VERSION}.orig.tar.xz 1412a1c760bbd05db026b6c0d1657affd6631cd0a63cddb6f73cc6d4aa616148"
  [x264]="x/x264/x264_${X264_VERSION}.orig.tar.gz 41606cb8e788a7f8c4514290646d4ba5c7bc68d9e1ccd1a73f446a90546913eb"
)

root=$(cd "$(dirname "$0")/../.." && pwd)
target="$root/.converters/ffmpeg"
binary="$target/bin/ffmpeg"
build_id=$(sha256sum "$0" | cut -d' ' -f1)

if [ "${1:-}" = "--if-missing" ]; then
  [ -x "$binary" ] && [ "$(cat "$target/BUILD" 2>/dev/null)" = "$build_id" ] && exit 0
  if [ -n "${RBS_SKIP_FFMPEG_BUILD:-}" ]; then
    echo "ffmpeg: RBS_SKIP_FFMPEG_BUILD is set, not building; video conversion needs infra/tools/build-ffmpeg.sh" >&2
    exit 0
  fi
  "$0" || {
    echo "ffmpeg: the build failed (above); npm install goes on, but video conversion fails until infra/tools/build-ffmpeg.sh succeeds" >&2
    exit 0
  }
  exit 0
fi

for tool in gcc make curl tar xz sha256sum; do
  command -v "$tool" >/dev/null || { echo "ffmpeg: $tool is needed to build ffmpeg" >&2; exit 1; }
done

jobs=$(nproc 2>/dev/null || echo 2)
work=$(mktemp -d "${TMPDIR:-/tmp}/rbs-ffmpeg.XXXXXX")
trap '[ -n "${RBS_KEEP_FFMPEG_BUILD:-}" ] || rm -rf "$work"' EXIT
prefix="$work/prefix"
mkdir -p "$prefix"
log="$work/build.log"
started=$(date +%s)
echo "ffmpeg: building FFmpeg $FFMPEG_VERSION with x264 (takes a few minutes, once per clone)" >&2

fetch() {
  local name=$1 path sum file
  read -r path sum <<<"${SOURCES[$name]}"
  file="$work/$(basename "$path")"
  curl -sSfL --retry 3 -o "$file" "$POOL/$path" || { echo "ffmpeg: could not download $POOL/$path" >&2; return 1; }
  echo "$sum  $file" | sha256sum -c --quiet - || { echo "ffmpeg: $path does not have the pinned SHA-256" >&2; return 1; }
  mkdir -p "$work/$name"
  tar -xf "$file" -C "$work/$name" --strip-components=1
}

# Report the end of the build log on failure: a configure or compiler error is in there.
step() {
  local what=$1; shift
  if ! "$@" >>"$log" 2>&1; then
    echo "ffmpeg: $what failed; the end of the log:" >&2
    tail -n 30 "$log" >&2
    return 1
  fi
}

fetch nasm
fetch x264
fetch ffmpeg

mkdir -p "$prefix/bin"
(cd "$work/nasm" && step "nasm configure" ./configure --prefix="$prefix" && step "nasm build" make -j"$jobs" nasm && install -m 755 nasm "$prefix/bin/nasm")
export PATH="$prefix/bin:$PATH"

(cd "$work/x264" && step "x264 configure" ./configure --prefix="$prefix" --enable-static --disable-cli --disable-opencl --enable-pic --bit-depth=8 --chroma-format=420 &&
  step "x264 build" make -j"$jobs" && step "x264 install" make install-lib-static)

# FFmpeg finds x264 through pkg-config; this answers for x264 alone, so none needs to be installed.
cat >"$prefix/bin/rbs-pkg-config" <<EOF
#!/bin/sh
out=
for arg in "\$@"; do
  case \$arg in
    --version|--modversion) out="0.164" ;;
    --cflags) out="-I$prefix/include" ;;
    --libs) out="-L$prefix/lib -lx264 -lpthread -lm -ldl" ;;
    --variable=includedir) out="$prefix/include" ;;
    --variable=*) out= ;;
    -*|x264|x264\ *) ;;
    *) exit 1 ;;
  esac
done
[ -z "\$out" ] || echo "\$out"
EOF
chmod 755 "$prefix/bin/rbs-pkg-config"

# Keep in step with shared/convert/video.ts (DEMUXERS and the arguments it passes).
demuxers=mov,matroska,avi,asf,mxf,mpegts,mpegps,flv,ogg
decoders=wrapped_avframe,h264,hevc,vp8,vp9,mpeg4,msmpeg4v1,msmpeg4v2,msmpeg4v3,wmv1,wmv2,wmv3,vc1,mpeg1video,mpeg2video,mjpeg,prores,dnxhd,dvvideo,theora,vp6,vp6f,flv,h263,png,rawvideo,v210,aac,aac_latm,mp1,mp2,mp3,ac3,eac3,opus,vorbis,flac,alac,wmav1,wmav2,wmapro,pcm_s16le,pcm_s16be,pcm_s24le,pcm_s24be,pcm_s32le,pcm_f32le,pcm_u8,pcm_alaw,pcm_mulaw,adpcm_ms,adpcm_ima_wav
parsers=h264,hevc,vp8,vp9,mpeg4video,mpegvideo,vc1,mjpeg,dnxhd,aac,aac_latm,ac3,mpegaudio,opus,vorbis,flac
filters=scale,setsar,format,aformat,aresample,null,anull,transpose,hflip,vflip,trim,atrim
# The test samples are made with this binary too (test/support/sample-files.ts): lavfi's testsrc and
# sine, MPEG-4/MP2/PCM encoders and the avi/mov/wav muxers. lavfi is never reachable from an upload:
# the converter allows only the demuxers above (-format_whitelist), and lavfi is not one of them.
test_filters=testsrc,sine
(cd "$work/ffmpeg" && step "ffmpeg configure" ./configure \
  --prefix=/opt --pkg-config="$prefix/bin/rbs-pkg-config" --pkg-config-flags=--static \
  --enable-gpl --enable-libx264 --disable-autodetect --disable-everything --disable-network \
  --disable-doc --disable-ffplay --disable-ffprobe --disable-debug --disable-shared --enable-static \
  --extra-ldflags=-static \
  --enable-protocol=file,pipe \
  --enable-demuxer="$demuxers" --enable-muxer=mp4,image2,mov,ipod,avi,wav \
  --enable-decoder="$decoders" --enable-encoder=libx264,aac,mjpeg,mpeg4,mp2,pcm_s16le \
  --enable-parser="$parsers" --enable-bsfs --enable-filter="$filters,$test_filters" --enable-indev=lavfi &&
  step "ffmpeg build" make -j"$jobs" ffmpeg)

# Replaced as a whole, so a build stopped half-way leaves the previous one (or none), never a mix.
rm -rf "$target.tmp" && mkdir -p "$target.tmp/bin"
install -m 755 "$work/ffmpeg/ffmpeg" "$target.tmp/bin/ffmpeg"
cp "$work/ffmpeg/COPYING.GPLv2" "$target.tmp/COPYING.GPLv2"
echo "$build_id" >"$target.tmp/BUILD"
rm -rf "$target" && mv "$target.tmp" "$target"
echo "ffmpeg: $binary ($("$binary" -hide_banner -version | head -n1 | cut -d' ' -f1-3)) in $(( $(date +%s) - started )) s" >&2

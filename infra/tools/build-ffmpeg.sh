#!/usr/bin/env bash
# Builds the conversion worker's ffmpeg: FFmpeg 7.1 with x264, static (no shared library beyond the
# kernel's interface), from the source tarballs Debian 13 ships, checked against pinned SHA-256
# sums. Needs only gcc, make, curl, tar, xz and flock (nasm is built here too, so no root and no apt).
#
#   infra/tools/build-ffmpeg.sh [--if-missing] [--log FILE]
#
# The binary lands in .converters/ffmpeg/bin/ffmpeg (ignored by git, kept across `npm ci`), with
# .converters/ffmpeg/BUILD, the SHA-256 of this script: a changed script (version, flags) rebuilds.
# shared/convert/packages.ts runs it locally and infra/constructs/converters-layer.ts ships it.
# Nothing builds it at install: the first need does (infra/tools/ffmpeg.ts: `npm start` and the
# tests in the background, synth before it stages the layer), or `npm run converters:ffmpeg`.
#
# --if-missing returns at once when that build is there. --log FILE keeps the compiler's output in
# FILE (truncated when this build starts) beside the progress lines printed on stderr.
# One build at a time per clone: a second caller waits on .converters/ffmpeg.lock for the first, and
# with --if-missing then finds it done (or, when it failed, fails too without building again). A
# failed build leaves .converters/ffmpeg.failed (one line: why).
#
# The sources come from the Debian archive apt is configured with here (/etc/apt/sources.list and
# /etc/apt/sources.list.d), or from DEBIAN_MIRROR (the URL of a Debian mirror: the directory
# holding dists/ and pool/) when it is set.
#
# Licence: FFmpeg with x264 is GPL-2.0-or-later, run as a separate program (never linked into the
# worker). Only the demuxers, decoders and filters the converter uses are compiled in (see
# shared/convert/video.ts); no network protocol, no device, no hardware acceleration.
set -euo pipefail

FFMPEG_VERSION=7.1.5
NASM_VERSION=2.16.03
X264_VERSION=0.164.3108+git31e19f9
declare -A SOURCES=(
  [ffmpeg]="f/ffmpeg/ffmpeg_${FFMPEG_VERSION}.orig.tar.xz de668509caf9e35e3cd162473441fdb29538c6d96ed080292b3cf9e6fc5d558f"
  [nasm]="n/nasm/nasm_${NASM_VERSION}.orig.tar.xz 1412a1c760bbd05db026b6c0d1657affd6631cd0a63cddb6f73cc6d4aa616148"
  [x264]="x/x264/x264_${X264_VERSION}.orig.tar.gz 41606cb8e788a7f8c4514290646d4ba5c7bc68d9e1ccd1a73f446a90546913eb"
)

if_missing=
log_file=
while [ $# -gt 0 ]; do
  case $1 in
    --if-missing) if_missing=1 ;;
    --log) log_file=${2:?--log needs a file}; shift ;;
    *) echo "usage: $0 [--if-missing] [--log FILE]" >&2; exit 2 ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/../.." && pwd)
converters="$root/.converters"
target="$converters/ffmpeg"
binary="$target/bin/ffmpeg"
failed="$converters/ffmpeg.failed"
build_id=$(sha256sum "$0" | cut -d' ' -f1)
current() { [ -x "$binary" ] && [ "$(cat "$target/BUILD" 2>/dev/null)" = "$build_id" ]; }

if [ -n "$if_missing" ] && current; then exit 0; fi
command -v flock >/dev/null || { echo "ffmpeg: flock (util-linux) is needed to build ffmpeg" >&2; exit 1; }
mkdir -p "$converters"
exec 9>>"$converters/ffmpeg.lock"
waited=
if ! flock -n 9; then
  echo "ffmpeg: another build of ffmpeg is under way in this clone; waiting for it" >&2
  flock 9
  waited=1
fi
if [ -n "$if_missing" ] && current; then exit 0; fi
if [ -n "$if_missing" ] && [ -n "$waited" ] && [ -f "$failed" ]; then
  echo "ffmpeg: the build that ran meanwhile failed: $(cat "$failed")" >&2
  exit 1
fi
rm -f "$failed"

# Progress lines go to stderr and to the log; a failure leaves its reason in $failed.
log=$log_file
case $log in '' | /*) ;; *) log="$PWD/$log" ;; esac
[ -z "$log" ] || : >"$log"
say() { echo "ffmpeg: $*" >&2; [ -z "$log" ] || echo "ffmpeg: $*" >>"$log"; }
fail() {
  say "$*"
  echo "$*" >"$failed"
  exit 1
}

for tool in gcc make curl tar xz sha256sum; do
  command -v "$tool" >/dev/null || fail "$tool is needed to build ffmpeg"
done

# The Debian archive apt uses: deb822 stanzas (URIs, Suites, Components; not Enabled: no) and
# one-line entries (`deb [options] URI suite components`). Only the Debian distribution's main
# component, not its security archive and not other vendors' lists; files apt ignores (other
# endings, such as *.disabled) are not read.
debian_mirrors() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
      {
        uris = ""; suites = ""; components = ""; types = ""; enabled = "yes"
        for (i = 1; i <= NF; i++) {
          line = $i; sub(/#.*/, "", line)
          if (match(line, /^[A-Za-z-]+:/)) { key = tolower(substr(line, 1, RLENGTH - 1)); value = substr(line, RLENGTH + 1) }
          else if (line ~ /^[ \t]/) value = line
          else continue
          if (key == "uris") uris = uris " " value
          else if (key == "suites") suites = suites " " value
          else if (key == "components") components = components " " value
          else if (key == "types") types = types " " value
          else if (key == "enabled") enabled = value
        }
        gsub(/[ \t]+/, " ", enabled)
        if (enabled ~ /no/ || types !~ /deb/ || (" " components " ") !~ / main /) next
        n = split(suites, s, /[ \t]+/); m = split(uris, u, /[ \t]+/)
        for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) if (s[i] != "" && u[j] != "") print u[j], s[i]
      }' "$file"
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$file" | awk '($1 == "deb" || $1 == "deb-src") && NF >= 4 {
      main = 0; for (i = 4; i <= NF; i++) if ($i == "main") main = 1
      if (main) print $2, $3
    }'
  done
}

# A Debian suite: a codename or an alias, possibly -updates, -backports or -proposed-updates.
debian_suite='^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable|experimental)(-updates|-backports|-proposed-updates)?$'

if [ -n "${DEBIAN_MIRROR:-}" ]; then
  mirror=${DEBIAN_MIRROR%/}
else
  mirror=$(debian_mirrors | awk -v suite="$debian_suite" '$2 ~ suite && $2 !~ /-security$/ && $1 !~ /security/ { sub(/\/+$/, "", $1); print $1; exit }')
  [ -n "$mirror" ] || fail "no Debian archive among apt's sources (/etc/apt/sources.list, /etc/apt/sources.list.d/*.sources): set DEBIAN_MIRROR to the URL of a Debian mirror (the directory holding dists/ and pool/)"
fi
POOL="$mirror/pool/main"

jobs=$(nproc 2>/dev/null || echo 2)
work=$(mktemp -d "${TMPDIR:-/tmp}/rbs-ffmpeg.XXXXXX")
# Stopped (Ctrl-C, a stopping local stack): no failure is recorded, the next caller builds again.
trap '[ -n "${RBS_KEEP_FFMPEG_BUILD:-}" ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
prefix="$work/prefix"
mkdir -p "$prefix"
[ -n "$log" ] || log="$work/build.log"
started=$(date +%s)
say "building FFmpeg $FFMPEG_VERSION with x264 from $POOL (a few minutes, once per clone)"

fetch() {
  local name=$1 path sum file
  read -r path sum <<<"${SOURCES[$name]}"
  file="$work/$(basename "$path")"
  curl -sSfL --retry 3 -o "$file" "$POOL/$path" || fail "could not download $POOL/$path (set DEBIAN_MIRROR to another Debian mirror)"
  echo "$sum  $file" | sha256sum -c --quiet - || fail "$POOL/$path does not have the pinned SHA-256"
  mkdir -p "$work/$name"
  tar -xf "$file" -C "$work/$name" --strip-components=1
}

# Report the end of the build log on failure: a configure or compiler error is in there.
step() {
  local what=$1; shift
  if ! "$@" >>"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "ffmpeg: the end of the build log is above" >&2
    fail "$what failed"
  fi
}

fetch nasm
fetch x264
fetch ffmpeg

say "building nasm (1/3)"
mkdir -p "$prefix/bin"
(cd "$work/nasm" && step "nasm configure" ./configure --prefix="$prefix" && step "nasm build" make -j"$jobs" nasm && install -m 755 nasm "$prefix/bin/nasm")
export PATH="$prefix/bin:$PATH"

say "building x264 (2/3)"
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
say "building FFmpeg (3/3, the longest part)"
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
say "built $binary ($("$binary" -hide_banner -version | head -n1 | cut -d' ' -f1-3)) in $(( $(date +%s) - started )) s"

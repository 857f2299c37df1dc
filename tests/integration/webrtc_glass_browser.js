// Glass-to-glass and added-delay measurements over WebRTC in headless Chromium (Debian's, through
// playwright-core from the build's web/node_modules), for webrtc_glass_test.py and
// bench/webrtc_delay.py. Prints one JSON object per phase on stdout, one a line.
//
//   node webrtc_glass_browser.js BASE_URL NODE_MODULES CHROMIUM PHASE...
//
// A phase is one of:
//   glass:APP/STREAM:SECONDS[:audio][:join=S][:pause=MS]
//     A canvas (640x360) shows performance.now() as a pattern (below), redrawn at 30 fps; its
//     captureStream(30) is published over WHIP to BASE_URL/APP/STREAM/whip (H.264 preferred with
//     setCodecPreferences, as web/publish.js does; with "audio", an oscillator's track too), then
//     a second RTCPeerConnection plays BASE_URL/APP/STREAM/whep (recvonly video and audio) into a
//     <video>, at once or S seconds later ("join=S"). Every frame the <video> presents
//     (requestVideoFrameCallback) is drawn into a small canvas and its pattern read: the frame's
//     draw time, on the page's clock. "pause=MS": 5 s after the player connected the canvas stops
//     changing for MS ms (no frame is captured meanwhile), as a starved or hidden page would.
//   play:APP/STREAM:SECONDS
//     Only the WHEP player, of a stream someone else publishes (webrtc_glass_test.py's paced RTMP
//     publisher, whose pictures carry their number in the same pattern). Times are wall-clock ms
//     (performance.timeOrigin + performance.now(), set against Date.now()), so that the caller can
//     set them against when it sent each picture.
// Each phase records, for SECONDS after the first presented frame, one row per presented frame:
//   [value, expectedDisplayTime, callbackTime, receiveTime, presentedFrames, width, rtpTimestamp]
// where value is the pattern's 20-bit number (-1: the pattern did not read, its check failed) and
// the times are ms (the page's clock for glass, wall clock for play); every 250 ms the jitter
// buffers' state (series: the video's mean delay, target and minimum over the interval, the
// audio's mean delay, ms, and frames decoded); and the getStats() of the connections at the end.
// Both sessions are DELETEd at the end of a phase.
//
// The pattern: 32 blocks, 8 columns by 4 rows over the whole picture, each black (0) or white
// (1): the first 20 (row by row) are a number, most significant bit first, the last 12 a check
// (checkOf below, the same in webrtc_glass_test.py; all black and all white fail it). A block is
// read as the mean of its middle half; a block neither clearly dark nor clearly light, or a check
// that does not match, makes the frame unreadable. H.264 at any bitrate keeps 80x90-pixel flat
// blocks, and a picture the browser scaled down still has them: the frame is read scaled to a
// fixed size.
"use strict";

const [base, nodeModules, chromium, ...phases] = process.argv.slice(2);
const { launchChromium } = require("./chromium_launch");

const print = (o) => process.stdout.write(JSON.stringify(o) + "\n");

// The page: served by the script itself (page.route) at BASE_URL/glass-test.html, so that it has
// the server's origin (no CORS) and nothing of the product's pages runs beside it.
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>glass</title></head>
<body style="margin:0;background:#444">
<canvas id="src" width="640" height="360" style="width:320px;height:180px"></canvas>
<script>
"use strict";
const COLS = 8, ROWS = 4, VALUE_BITS = 20, CHECK_BITS = 12, MOD = 1 << VALUE_BITS;
const checkOf = (v) => ((Math.imul(v, 0x9E3779B1) >>> 20) ^ 0x5A5) & 0xFFF;  // all black or all white fails
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function drawPattern(ctx, w, h, v) {
  const c = checkOf(v);
  for (let i = 0; i < COLS * ROWS; ++i) {
    const bit = i < VALUE_BITS ? (v >> (VALUE_BITS - 1 - i)) & 1 : (c >> (CHECK_BITS - 1 - (i - VALUE_BITS))) & 1;
    ctx.fillStyle = bit ? "#fff" : "#000";
    const x0 = Math.round((i % COLS) * w / COLS), x1 = Math.round(((i % COLS) + 1) * w / COLS);
    const y0 = Math.round(Math.floor(i / COLS) * h / ROWS), y1 = Math.round((Math.floor(i / COLS) + 1) * h / ROWS);
    ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
  }
}

// The reader: the frame drawn at RW x RH, each block's middle half averaged.
const RW = 160, RH = 96;
const readCanvas = document.createElement("canvas");
readCanvas.width = RW;
readCanvas.height = RH;
const readCtx = readCanvas.getContext("2d", { willReadFrequently: true });
function readPattern(video) {
  readCtx.drawImage(video, 0, 0, RW, RH);
  const px = readCtx.getImageData(0, 0, RW, RH).data;
  const bw = RW / COLS, bh = RH / ROWS;
  let v = 0, c = 0;
  for (let i = 0; i < COLS * ROWS; ++i) {
    const bx = (i % COLS) * bw, by = Math.floor(i / COLS) * bh;
    let sum = 0, n = 0;
    for (let y = Math.round(by + bh / 4); y < Math.round(by + 3 * bh / 4); ++y) {
      for (let x = Math.round(bx + bw / 4); x < Math.round(bx + 3 * bw / 4); ++x) {
        const o = (y * RW + x) * 4;
        sum += px[o] + px[o + 1] + px[o + 2];
        ++n;
      }
    }
    const mean = sum / (3 * n);
    if (mean > 80 && mean < 175) return -1;  // neither black nor white: a damaged picture
    const bit = mean >= 128 ? 1 : 0;
    if (i < VALUE_BITS) v = (v << 1) | bit;
    else c = (c << 1) | bit;
  }
  return c === checkOf(v) ? v : -1;
}

function preferH264(transceiver) {
  // H.264 first, packetization-mode 1 and constrained baseline first (web/publish.js's order).
  const rank = (c) => {
    if (c.mimeType.toLowerCase() !== "video/h264") return 9;
    const fmtp = c.sdpFmtpLine || "";
    if (!/packetization-mode=1/.test(fmtp)) return 3;
    if (/profile-level-id=42e01f/i.test(fmtp)) return 0;
    return /profile-level-id=42/i.test(fmtp) ? 1 : 2;
  };
  const codecs = RTCRtpSender.getCapabilities("video").codecs.slice().sort((a, b) => rank(a) - rank(b));
  transceiver.setCodecPreferences(codecs);
  return rank(codecs[0]) < 9;
}

async function waitConnected(pc, ms) {
  const deadline = performance.now() + ms;
  while (pc.connectionState !== "connected" && performance.now() < deadline) {
    if (pc.connectionState === "failed") break;
    await sleep(20);
  }
  return pc.connectionState;
}

// POSTs an offer; a 404 (the stream is not live yet) is tried again for up to 10 s.
async function signal(pc, url, out) {
  await pc.setLocalDescription(await pc.createOffer());
  const deadline = performance.now() + 10000;
  for (;;) {
    const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/sdp" },
      body: pc.localDescription.sdp });
    out.status = r.status;
    const body = await r.text();
    if (r.status === 201) {
      out.location = new URL(r.headers.get("Location"), url).href;
      await pc.setRemoteDescription({ type: "answer", sdp: body });
      return true;
    }
    if (r.status !== 404 || performance.now() > deadline) {
      out.body = body;
      return false;
    }
    ++out.retries;
    await sleep(100);
  }
}

async function stats(pc) {
  const out = {};
  const report = await pc.getStats();
  report.forEach((x) => {
    if ((x.type === "inbound-rtp" || x.type === "outbound-rtp") && x.kind === "video") {
      const keep = ["framesEncoded", "framesSent", "framesDecoded", "framesDropped", "framesReceived",
        "keyFramesDecoded", "keyFramesEncoded", "frameWidth", "frameHeight", "framesPerSecond", "freezeCount",
        "totalFreezesDuration", "jitterBufferDelay", "jitterBufferTargetDelay", "jitterBufferMinimumDelay",
        "jitterBufferEmittedCount", "totalDecodeTime", "totalProcessingDelay", "totalAssemblyTime", "totalEncodeTime",
        "totalPacketSendDelay", "packetsLost", "nackCount", "pliCount", "firCount", "qualityLimitationReason",
        "bytesSent", "bytesReceived", "packetsSent", "packetsReceived", "retransmittedPacketsSent"];
      const s = {};
      for (const k of keep) if (x[k] !== undefined) s[k] = x[k];
      if (x.codecId && report.get(x.codecId)) s.codec = report.get(x.codecId).mimeType;
      out[x.type === "inbound-rtp" ? "in" : "out"] = s;
    }
    if (x.type === "inbound-rtp" && x.kind === "audio") {
      out.audio = { samples: x.totalSamplesReceived, concealed: x.concealedSamples,
        jitterBufferDelay: x.jitterBufferDelay, jitterBufferEmittedCount: x.jitterBufferEmittedCount };
    }
  });
  return out;
}

// Date.now() (the system clock, whole ms) less the page's clock: the median of many readings.
function wallOffset() {
  const d = [];
  for (let i = 0; i < 200; ++i) {
    const a = performance.timeOrigin + performance.now();
    d.push(Date.now() - a);
  }
  d.sort((x, y) => x - y);
  return d[d.length >> 1] + 0.5;  // Date.now() truncates: half a ms on average
}

// The WHEP player: plays url into the <video>, records every presented frame for SECONDS after
// the first, then DELETEs. toClock(t) maps the page's clock to the phase's.
async function play(url, seconds, toClock, out) {
  // A <video> of its own: one an earlier phase used would show that phase's last frame first.
  const video = document.createElement("video");
  Object.assign(video, { muted: true, autoplay: true, playsInline: true });
  video.style.cssText = "width:320px;height:180px";
  document.body.appendChild(video);
  const pc = new RTCPeerConnection();
  pc.addTransceiver("video", { direction: "recvonly" });
  pc.addTransceiver("audio", { direction: "recvonly" });
  pc.ontrack = (e) => {
    if (!video.srcObject) video.srcObject = e.streams[0] || new MediaStream([e.track]);
    else if (!video.srcObject.getTracks().includes(e.track)) video.srcObject.addTrack(e.track);
  };
  const w = (out.whep = { retries: 0 });
  const t0 = performance.now();
  w.offerAt = toClock(t0);
  if (!(await signal(pc, url, w))) return pc.close();
  w.answeredAt = toClock(performance.now());
  w.connectionState = await waitConnected(pc, 10000);
  w.connectedAt = toClock(performance.now());
  pauseFrom = performance.now() + 5000;
  if (w.connectionState !== "connected") return pc.close();
  const frames = (out.frames = []);
  let first = null;
  // Every 250 ms, the jitter buffers' state: what each track's buffer held, on average, over the
  // last interval (ms), and the video's target (A/V sync and jitter).
  const series = (out.series = []);
  let last = null, sampling = true;
  const sample = async () => {
    const s = await stats(pc);
    const now = toClock(performance.now());
    const v = s.in || {}, a = s.audio || {};
    if (last) {
      const dv = (v.jitterBufferEmittedCount || 0) - (last.v.jitterBufferEmittedCount || 0);
      const da = (a.jitterBufferEmittedCount || 0) - (last.a.jitterBufferEmittedCount || 0);
      const per = (x, y, k, n) => (n > 0 ? +((1000 * ((x[k] || 0) - (y[k] || 0))) / n).toFixed(1) : null);
      series.push([+now.toFixed(1), per(v, last.v, "jitterBufferDelay", dv),
        per(v, last.v, "jitterBufferTargetDelay", dv), per(v, last.v, "jitterBufferMinimumDelay", dv),
        per(a, last.a, "jitterBufferDelay", da), v.framesDecoded || 0]);
    }
    last = { v, a };
    if (sampling) setTimeout(sample, 250);
  };
  sample();
  await new Promise((resolve) => {
    const onFrame = (now, md) => {
      const v = readPattern(video);
      const cb = performance.now();
      if (first === null) first = cb;
      frames.push([v, +toClock(md.expectedDisplayTime).toFixed(2), +toClock(cb).toFixed(2),
        md.receiveTime !== undefined ? +toClock(md.receiveTime).toFixed(2) : null, md.presentedFrames, md.width,
        md.rtpTimestamp !== undefined ? md.rtpTimestamp : null]);
      if (cb - first >= seconds * 1000) return resolve();
      video.requestVideoFrameCallback(onFrame);
    };
    video.requestVideoFrameCallback(onFrame);
    // No frame at all within 8 s: give up (the caller reports it).
    setTimeout(() => {
      if (first === null) resolve();
    }, 8000);
  });
  sampling = false;
  w.firstFrameAt = first === null ? null : toClock(first);
  w.stats = await stats(pc);
  const del = await fetch(w.location, { method: "DELETE" });
  w.deleteStatus = del.status;
  pc.close();
  video.srcObject = null;
  video.remove();
}

// A pause of the publisher (the "pause=MS" option): 5 s after the player connected, the canvas
// stops changing for MS ms, as a starved or hidden page would (no frame is captured meanwhile).
let pauseFrom = Infinity;

window.glass = async function (phase, name, seconds, withAudio, joinAfter, pauseMs) {
  pauseFrom = Infinity;
  // pageToWall: the page's clock + pageToWall = the wall clock (ms), for either phase.
  const out = { phase, name, pageToWall: performance.timeOrigin + wallOffset() };
  const url = (kind) => new URL("/" + name + "/" + kind, location.href).href;
  if (phase === "play") {
    const offset = wallOffset();
    out.wallOffset = offset;
    await play(url("whep"), seconds, (t) => performance.timeOrigin + t + offset, out);
    out.wallOffsetAfter = wallOffset();
    return out;
  }
  // glass: the canvas, redrawn at 30 fps with the time of the drawing.
  const canvas = document.getElementById("src");
  const ctx = canvas.getContext("2d");
  let drawing = true, drawn = 0, next = performance.now();
  const tick = () => {
    if (!drawing) return;
    const now = performance.now();
    // 30 fps on a 60 Hz animation clock: every other frame (4 ms of slack for its jitter); after
    // a stall, on from now, no catching up.
    if (now >= next - 4 && !(now >= pauseFrom && now < pauseFrom + pauseMs)) {
      drawPattern(ctx, canvas.width, canvas.height, Math.floor(now) % MOD);
      ++drawn;
      next += 1000 / 30;
      if (next < now) next = now + 1000 / 30;
    }
    requestAnimationFrame(tick);
  };
  tick();
  const stream = canvas.captureStream(30);
  const track = stream.getVideoTracks()[0];
  track.contentHint = "motion";  // keep the frame rate under load, lower the resolution if needed
  const pub = new RTCPeerConnection();
  const tr = pub.addTransceiver(track, { direction: "sendonly", streams: [stream] });
  out.h264 = preferH264(tr);
  let audio = null;
  if (withAudio) {
    audio = new AudioContext();
    const osc = audio.createOscillator();
    const dest = audio.createMediaStreamDestination();
    osc.connect(dest);
    osc.start();
    stream.addTrack(dest.stream.getAudioTracks()[0]);
    pub.addTransceiver(dest.stream.getAudioTracks()[0], { direction: "sendonly", streams: [stream] });
  }
  const p = (out.whip = { retries: 0, startWall: Date.now() });
  const t0 = performance.now();
  if (await signal(pub, url("whip"), p)) {
    p.connectionState = await waitConnected(pub, 10000);
    p.connectedAfterMs = performance.now() - t0;
    p.connectedWall = Date.now();
    if (p.connectionState === "connected") {
      if (joinAfter > 0) await sleep(joinAfter * 1000);
      await play(url("whep"), seconds, (t) => t, out);
      p.stats = await stats(pub);
    }
  }
  drawing = false;
  out.drawn = drawn;
  if (p.location) p.deleteStatus = (await fetch(p.location, { method: "DELETE" })).status;
  pub.close();
  for (const t of stream.getTracks()) t.stop();
  if (audio) await audio.close();
  return out;
};
</script></body></html>`;

async function main() {
  const browser = await launchChromium(nodeModules, chromium, { webrtc: true });
  try {
    const page = await browser.newPage({ viewport: { width: 700, height: 400 } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e && e.message ? e.message : e)));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.route(`${base}/glass-test.html`, (route) =>
      route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: PAGE }));
    await page.goto(`${base}/glass-test.html`, { waitUntil: "load", timeout: 15000 });
    for (const spec of phases) {
      const [phase, name, seconds, ...options] = spec.split(":");
      const join = options.find((o) => o.startsWith("join="));
      const pause = options.find((o) => o.startsWith("pause="));
      let r;
      try {
        r = await page.evaluate(([p, n, s, a, j, z]) => window.glass(p, n, s, a, j, z),
          [phase, name, Number(seconds), options.includes("audio"), join ? Number(join.slice(5)) : 0,
            pause ? Number(pause.slice(6)) : 0]);
      } catch (e) {
        r = { phase, name, fatal: String(e && e.stack ? e.stack : e) };
      }
      r.errors = errors.splice(0);
      print(r);
    }
  } catch (e) {
    print({ fatal: String(e && e.stack ? e.stack : e) });
  } finally {
    await browser.close();
  }
}

main();

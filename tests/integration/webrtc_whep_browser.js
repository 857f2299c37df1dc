// Plays a stream over WHEP in headless Chromium (Debian's, through playwright-core from the
// build's web/node_modules) with a plain RTCPeerConnection, for webrtc_whep_test.py. Prints one
// JSON object on stdout.
//
//   node webrtc_whep_browser.js BASE_URL APP/STREAM NODE_MODULES CHROMIUM SECONDS
//
// The page (BASE_URL/, for its origin) makes a recvonly video and audio offer, POSTs it to
// BASE_URL/APP/STREAM/whep, sets the answer, and samples getStats() every second for SECONDS once
// the connection is up: inbound video frames decoded, frames per second, freezes, the decoder's
// codec; inbound audio samples and concealment. Then it DELETEs the resource. The presented
// frames' timing (requestVideoFrameCallback) of the join, and any gap later, say whose a freeze is.
"use strict";

const [base, stream, nodeModules, chromium, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg) || 10;
const { launchChromium } = require("./chromium_launch");

async function main() {
  const result = { pageErrors: [], consoleErrors: [] };
  const browser = await launchChromium(nodeModules, chromium, { webrtc: true });
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => result.pageErrors.push(String(e && e.message ? e.message : e)));
    page.on("console", (m) => {
      if (m.type() === "error") result.consoleErrors.push(m.text());
    });
    await page.goto(`${base}/`, { waitUntil: "load", timeout: 15000 });
    const r = await page.evaluate(
      async ({ url, seconds }) => {
        const out = { samples: [] };
        const t0 = performance.now();
        const pc = new RTCPeerConnection();
        pc.addTransceiver("video", { direction: "recvonly" });
        pc.addTransceiver("audio", { direction: "recvonly" });
        const video = document.createElement("video");
        video.muted = true;
        video.autoplay = true;
        document.body.appendChild(video);
        // Every presented frame of the first 3 s (the join and its catch-up), and every gap of 150
        // ms or more between presented frames: [ms since the start, ms since the last frame was
        // presented, ms between the two frames' arrivals, ms of media between them]. A gap with
        // frames that arrived on time is the browser's; with a gap in the arrivals, the sender's.
        out.frames = [];
        out.gaps = [];
        let prev = null;
        let firstAt = null;
        const onFrame = (now, m) => {
          const at = m.presentationTime || now;
          if (firstAt === null) firstAt = at;
          if (prev !== null) {
            const row = [Math.round(at - t0), Math.round(at - prev.at),
              m.receiveTime && prev.receiveTime ? Math.round(m.receiveTime - prev.receiveTime) : null,
              m.rtpTimestamp !== undefined && prev.rtpTimestamp !== undefined
                ? Math.round(((m.rtpTimestamp - prev.rtpTimestamp) >>> 0) / 90) : null];
            if (at - firstAt <= 3000) out.frames.push(row);
            if (row[1] >= 150) out.gaps.push(row);
          }
          prev = { at, receiveTime: m.receiveTime, rtpTimestamp: m.rtpTimestamp };
          video.requestVideoFrameCallback(onFrame);
        };
        video.requestVideoFrameCallback(onFrame);
        pc.ontrack = (e) => {
          if (!video.srcObject) video.srcObject = e.streams[0] || new MediaStream([e.track]);
          else video.srcObject.addTrack(e.track);
        };
        await pc.setLocalDescription(await pc.createOffer());
        const resp = await fetch(url, { method: "POST", headers: { "Content-Type": "application/sdp" }, body: pc.localDescription.sdp });
        out.status = resp.status;
        out.location = resp.headers.get("Location");
        const answer = await resp.text();
        if (resp.status !== 201) {
          out.body = answer;
          return out;
        }
        await pc.setRemoteDescription({ type: "answer", sdp: answer });
        // Connected within 10 s, or not at all.
        const deadline = performance.now() + 10000;
        while (pc.connectionState !== "connected" && performance.now() < deadline) {
          if (pc.connectionState === "failed") break;
          await new Promise((r) => setTimeout(r, 50));
        }
        out.connectionState = pc.connectionState;
        out.connectedAfterMs = performance.now() - t0;
        if (pc.connectionState !== "connected") return out;
        let firstFrameMs = null;
        for (let i = 0; i <= seconds * 10; ++i) {
          const stats = await pc.getStats();
          const s = { t: (performance.now() - t0) / 1000 };
          stats.forEach((x) => {
            if (x.type === "inbound-rtp" && x.kind === "video") {
              s.framesDecoded = x.framesDecoded || 0;
              // A freeze with frames received and dropped is the browser's; with none received, the wire's.
              s.framesReceived = x.framesReceived || 0;
              s.framesDropped = x.framesDropped || 0;
              s.fps = x.framesPerSecond || 0;
              s.freezes = x.freezeCount || 0;
              s.keyFramesDecoded = x.keyFramesDecoded || 0;
              s.packetsLost = x.packetsLost || 0;
              s.nacks = x.nackCount || 0;
              s.plis = x.pliCount || 0;
              s.width = x.frameWidth || 0;
              s.videoCodec = x.codecId ? (stats.get(x.codecId) || {}).mimeType : undefined;
            }
            if (x.type === "inbound-rtp" && x.kind === "audio") {
              s.audioSamples = x.totalSamplesReceived || 0;
              s.concealed = x.concealedSamples || 0;
              s.audioCodec = x.codecId ? (stats.get(x.codecId) || {}).mimeType : undefined;
            }
          });
          if (firstFrameMs === null && s.framesDecoded > 0) firstFrameMs = performance.now() - t0;
          if (i % 10 === 0) out.samples.push(s);
          if (firstFrameMs === null && i >= 50) break;  // nothing decoded in 5 s
          await new Promise((r) => setTimeout(r, 100));
        }
        out.firstFrameMs = firstFrameMs;
        const del = await fetch(new URL(out.location, url).toString(), { method: "DELETE" });
        out.deleteStatus = del.status;
        pc.close();
        return out;
      },
      { url: `${base}/${stream}/whep`, seconds },
    );
    Object.assign(result, r);
  } catch (e) {
    result.fatal = String(e && e.stack ? e.stack : e);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(result));
}

main();

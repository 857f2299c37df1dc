// Plays a stream over WHEP in headless Chromium (Debian's, through playwright-core from the
// build's web/node_modules) behind a lossy link, for webrtc_loss_test.py, which runs this script
// inside the link's network namespace. Prints one JSON object on stdout.
//
//   node webrtc_loss_browser.js BASE_URL APP/STREAM NODE_MODULES CHROMIUM SECONDS
//
// As webrtc_whep_browser.js: the page (a page of BASE_URL, for its origin) makes a recvonly video
// and audio offer with a plain RTCPeerConnection, POSTs it to BASE_URL/APP/STREAM/whep and sets
// the answer. Once connected it polls getStats() every 100 ms until SECONDS after the first
// decoded frame, keeping a sample at each whole second from that frame on (one a second before
// it): the inbound video's frames (received, decoded, dropped), freezes, packets received and
// lost, NACKs and PLIs sent, jitter buffer delay; the inbound audio's samples and concealment; the
// selected candidate pair's round trip and remote address. Each new freeze is noted with the wall
// clock (to set it beside the link's repairs), and each gap of 150 ms or more between two frames
// the page presented (requestVideoFrameCallback) with how far apart the two arrived: a frame that
// arrived late (the network, a repair) or one shown late (the browser). Then it DELETEs the
// resource.
"use strict";

const [base, stream, nodeModules, chromium, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg) || 30;
const { launchChromium } = require("./chromium_launch");

async function main() {
  const result = { pageErrors: [], consoleErrors: [] };
  const started = Date.now();
  const browser = await launchChromium(nodeModules, chromium, { webrtc: true });
  try {
    result.launchMs = Date.now() - started;
    const page = await browser.newPage();
    page.on("pageerror", (e) => result.pageErrors.push(String(e && e.message ? e.message : e)));
    page.on("console", (m) => {
      if (m.type() === "error") result.consoleErrors.push(m.text());
    });
    // Any page of the server's gives the origin (a 404 will do: the built-in player page would poll
    // the stats API, which answers 403 outside 127.0.0.1). Over the lossy link too.
    await page.goto(`${base}/webrtc-loss-test`, { waitUntil: "load", timeout: 20000 });
    result.pageMs = Date.now() - started;
    const r = await page.evaluate(
      async ({ url, seconds }) => {
        const out = { samples: [], freezes: [], gaps: [] };
        const t0 = performance.now();
        const pc = new RTCPeerConnection();
        pc.addTransceiver("video", { direction: "recvonly" });
        pc.addTransceiver("audio", { direction: "recvonly" });
        const video = document.createElement("video");
        video.muted = true;
        video.autoplay = true;
        document.body.appendChild(video);
        let prev = null;
        const onFrame = (now, m) => {
          const at = m.presentationTime || now;
          if (prev !== null && at - prev.at >= 150) {
            out.gaps.push({
              t: Math.round(at - t0) / 1000, gapMs: Math.round(at - prev.at),
              arrivedMs: m.receiveTime && prev.receiveTime ? Math.round(m.receiveTime - prev.receiveTime) : null,
              mediaMs: m.rtpTimestamp !== undefined && prev.rtpTimestamp !== undefined
                ? Math.round(((m.rtpTimestamp - prev.rtpTimestamp) >>> 0) / 90) : null,
            });
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
        // The offer's RTCP feedback (what Chromium could use; the answer takes a subset).
        out.offerFeedback = [...new Set(pc.localDescription.sdp.split("\r\n")
          .filter((l) => l.startsWith("a=rtcp-fb:")).map((l) => l.split(" ").slice(1).join(" ")))];
        const resp = await fetch(url, { method: "POST", headers: { "Content-Type": "application/sdp" }, body: pc.localDescription.sdp });
        out.status = resp.status;
        out.location = resp.headers.get("Location");
        const answer = await resp.text();
        if (resp.status !== 201) {
          out.body = answer;
          return out;
        }
        out.answerMs = performance.now() - t0;
        await pc.setRemoteDescription({ type: "answer", sdp: answer });
        // Connected within 15 s, or not at all (a lost STUN or DTLS packet is sent again).
        const deadline = performance.now() + 15000;
        while (pc.connectionState !== "connected" && performance.now() < deadline) {
          if (pc.connectionState === "failed") break;
          await new Promise((r) => setTimeout(r, 50));
        }
        out.connectionState = pc.connectionState;
        out.connectedAfterMs = performance.now() - t0;
        if (pc.connectionState !== "connected") return out;
        let firstFrameMs = null;
        let nextSampleMs = 0;
        for (;;) {
          const now = performance.now() - t0;
          if (firstFrameMs === null ? now > out.connectedAfterMs + 10000 : now > firstFrameMs + seconds * 1000 + 300) {
            break;  // nothing decoded in 10 s; or done, with a sample at SECONDS
          }
          const stats = await pc.getStats();
          const s = { t: (performance.now() - t0) / 1000 };
          stats.forEach((x) => {
            if (x.type === "inbound-rtp" && x.kind === "video") {
              s.framesReceived = x.framesReceived || 0;
              s.framesDecoded = x.framesDecoded || 0;
              s.framesDropped = x.framesDropped || 0;
              s.keyFramesDecoded = x.keyFramesDecoded || 0;
              s.freezes = x.freezeCount || 0;
              s.freezesS = x.totalFreezesDuration || 0;
              s.packetsReceived = x.packetsReceived || 0;
              s.packetsLost = x.packetsLost || 0;
              s.nacks = x.nackCount || 0;
              s.plis = x.pliCount || 0;
              s.firs = x.firCount || 0;
              s.jitterBufferS = x.jitterBufferDelay || 0;
              s.jitterBufferFrames = x.jitterBufferEmittedCount || 0;
              s.width = x.frameWidth || 0;
              s.videoCodec = x.codecId ? (stats.get(x.codecId) || {}).mimeType : undefined;
            }
            if (x.type === "inbound-rtp" && x.kind === "audio") {
              s.audioSamples = x.totalSamplesReceived || 0;
              s.concealed = x.concealedSamples || 0;
              s.audioPacketsLost = x.packetsLost || 0;
              s.audioCodec = x.codecId ? (stats.get(x.codecId) || {}).mimeType : undefined;
            }
            if (x.type === "candidate-pair" && x.nominated && x.state === "succeeded") {
              s.rttS = x.currentRoundTripTime;
              const remote = stats.get(x.remoteCandidateId) || {};
              s.remote = `${remote.address || remote.ip}:${remote.port}`;
            }
          });
          if (firstFrameMs === null && s.framesDecoded > 0) {
            firstFrameMs = s.t * 1000;
            nextSampleMs = firstFrameMs;
          }
          const seen = out.freezes.length ? out.freezes[out.freezes.length - 1] : { count: 0, totalS: 0 };
          if (s.freezes > seen.count) {
            out.freezes.push({ t: s.t, wall: Date.now(), count: s.freezes, totalS: s.freezesS,
                               lastS: s.freezesS - seen.totalS });
          }
          if (s.t * 1000 >= nextSampleMs) {
            out.samples.push(s);
            nextSampleMs += 1000 * Math.max(1, Math.ceil((s.t * 1000 - nextSampleMs) / 1000 + 1e-9));
          }
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
    result.doneMs = Date.now() - started;
  } catch (e) {
    result.fatal = String(e && e.stack ? e.stack : e);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(result));
}

main();

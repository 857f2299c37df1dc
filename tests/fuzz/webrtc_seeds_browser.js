// Drives headless Chromium (Debian's, through playwright-core) for tests/fuzz/webrtc_seeds.py:
// prints one JSON object with the SDP offers Chromium makes for a WHIP-like publisher (sendonly
// video + audio from the fake camera and microphone) and a WHEP-like player (recvonly video +
// audio), and, when given a UDP port, applies a fake ICE-lite answer whose one host candidate is
// 127.0.0.1:PORT to the publisher's connection, so that Chromium sends its STUN connectivity
// checks there (the Python side answers them and keeps the datagrams).
//
//   node webrtc_seeds_browser.js NODE_MODULES CHROMIUM [PORT UFRAG PWD]
"use strict";

const path = require("path");

const [nodeModules, chromium, port, ufrag, pwd] = process.argv.slice(2);
const { chromium: browserType } = require(path.resolve(nodeModules, "playwright-core"));

async function main() {
  const browser = await browserType.launch({
    executablePath: chromium,
    headless: false, // the flags ask for the new headless mode themselves
    args: [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
      "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream", "--allow-loopback-in-peer-connection",
      "--disable-background-networking", "--disable-component-update",
    ],
    timeout: 20000,
  });
  try {
    const page = await browser.newPage();
    // getUserMedia needs a secure context: a page of http://localhost, answered in the browser.
    await page.route("http://localhost/**", (route) => route.fulfill({ contentType: "text/html", body: "<html></html>" }));
    await page.goto("http://localhost/");
    const result = await page.evaluate(async ({ port, ufrag, pwd }) => {
      const out = {};
      const stream = await navigator.mediaDevices.getUserMedia({ video: true, audio: true });
      const whip = new RTCPeerConnection();
      for (const track of stream.getTracks()) whip.addTransceiver(track, { direction: "sendonly", streams: [stream] });
      const offer = await whip.createOffer();
      out.whip = offer.sdp;
      const whep = new RTCPeerConnection();
      whep.addTransceiver("video", { direction: "recvonly" });
      whep.addTransceiver("audio", { direction: "recvonly" });
      out.whep = (await whep.createOffer()).sdp;
      if (!port) return out;

      // The answer an ICE-lite server gives, with a made-up certificate fingerprint: ICE runs
      // (and the checks reach the port) before DTLS would notice.
      await whip.setLocalDescription(offer);
      const mids = whip.getTransceivers().map((t) => t.mid);
      const fp = Array.from({ length: 32 }, (_, i) => ((i * 37 + 11) & 255).toString(16).padStart(2, "0").toUpperCase()).join(":");
      let sdp = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=ice-lite\r\n" +
        `a=group:BUNDLE ${mids.join(" ")}\r\n`;
      const kinds = whip.getTransceivers().map((t) => t.receiver.track.kind);
      kinds.forEach((kind, i) => {
        sdp += kind === "video"
          ? `m=video ${port} UDP/TLS/RTP/SAVPF 96\r\n`
          : `m=audio ${port} UDP/TLS/RTP/SAVPF 111\r\n`;
        sdp += `c=IN IP4 127.0.0.1\r\na=mid:${mids[i]}\r\na=recvonly\r\na=rtcp-mux\r\n` +
          `a=ice-ufrag:${ufrag}\r\na=ice-pwd:${pwd}\r\na=fingerprint:sha-256 ${fp}\r\na=setup:passive\r\n`;
        sdp += kind === "video"
          ? "a=rtpmap:96 H264/90000\r\na=fmtp:96 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r\n"
          : "a=rtpmap:111 opus/48000/2\r\n";
        sdp += `a=candidate:1 1 udp 2130706431 127.0.0.1 ${port} typ host\r\na=end-of-candidates\r\n`;
      });
      await whip.setRemoteDescription({ type: "answer", sdp });
      out.answer = sdp;
      const states = [];
      const deadline = Date.now() + 6000;
      while (Date.now() < deadline) {
        states.push(whip.iceConnectionState);
        if (whip.iceConnectionState === "connected" || whip.iceConnectionState === "failed") break;
        await new Promise((r) => setTimeout(r, 250));
      }
      await new Promise((r) => setTimeout(r, 1500));
      out.iceStates = Array.from(new Set(states));
      return out;
    }, { port: port ? Number(port) : 0, ufrag, pwd });
    console.log(JSON.stringify(result));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.log(JSON.stringify({ fatal: String(e && e.stack ? e.stack : e) }));
  process.exit(1);
});

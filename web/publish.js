// Sluice's "publish from this browser" page (publish.html): the camera and the microphone
// (getUserMedia) sent to the server over WebRTC with WHIP (docs/webrtc.md): sendonly video and
// audio transceivers, H.264 preferred (the server takes H.264 video and Opus audio), the offer
// POSTed to /APP/STREAM/whip with the key as Authorization: Bearer KEY, the answer set; Stop sends
// DELETE to the session's Location. Plain JS, no library.
// ?stream=app/name in the page's URL fills the stream name.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const preview = $("preview");
  const statusLine = $("status");
  const nameInput = $("name");
  const keyInput = $("key");
  const startButton = $("start");
  const stopButton = $("stop");

  // What a test (or a curious user in the console) can read.
  const state = { name: null, httpStatus: null, location: null, connectionState: null, error: null,
                  videoCodec: null, videoCodecs: null, framesSent: 0, width: 0, height: 0, deletes: [], errors: [] };
  window.sluicePublish = state;

  let session = null;  // { pc, stream, location }
  let statsTimer = null;

  function setStatus(text, bad) {
    statusLine.textContent = text;
    statusLine.className = bad ? "bad" : "muted";
  }

  function whipUrl(name) {
    const slash = name.indexOf("/");
    return new URL(encodeURIComponent(name.slice(0, slash)) + "/" + encodeURIComponent(name.slice(slash + 1)) +
      "/whip", document.baseURI).href;
  }

  // H.264 first, packetization-mode 1 and constrained baseline (42e01f) before the others; the
  // browser's other codecs after them (the server picks H.264 from the offer).
  function preferH264(transceiver) {
    const rank = (c) => {
      if (c.mimeType.toLowerCase() !== "video/h264") return 9;
      const fmtp = c.sdpFmtpLine || "";
      if (!/packetization-mode=1/.test(fmtp)) return 3;
      if (/profile-level-id=42e01f/i.test(fmtp)) return 0;
      return /profile-level-id=42/i.test(fmtp) ? 1 : 2;
    };
    for (const source of [window.RTCRtpSender, window.RTCRtpReceiver]) {
      const caps = source && source.getCapabilities ? source.getCapabilities("video") : null;
      if (!caps) continue;
      const codecs = caps.codecs.slice().sort((a, b) => rank(a) - rank(b));
      if (rank(codecs[0]) === 9) return false;  // no H.264 in this browser
      try {
        transceiver.setCodecPreferences(codecs);
        state.videoCodecs = codecs.filter((c) => rank(c) < 9).map((c) => c.sdpFmtpLine || c.mimeType);
        return true;
      } catch (e) {
        // older browsers check against the receiver's codecs: try those
      }
    }
    return null;  // could not say: the offer keeps the browser's order
  }

  function stopMedia(s) {
    clearInterval(statsTimer);
    statsTimer = null;
    const close = () => {
      try {
        if (s.pc) s.pc.close();
      } catch (e) {
        // closed either way
      }
    };
    if (s.stream) for (const t of s.stream.getTracks()) t.stop();
    // DELETE first: closing the connection sends DTLS close_notify, which ends the session too, and
    // the DELETE would find none.
    if (s.location) {
      fetch(s.location, { method: "DELETE", keepalive: true, headers: s.auth }).then(
        (r) => state.deletes.push(r.status), () => state.deletes.push(0)).finally(close);
    } else {
      close();
    }
    preview.srcObject = null;
  }

  function finish(text, bad) {
    if (session) {
      const s = session;
      session = null;
      stopMedia(s);
    }
    startButton.disabled = false;
    stopButton.disabled = true;
    nameInput.disabled = keyInput.disabled = false;
    $("watch").hidden = true;
    setStatus(text, bad);
  }

  async function sampleStats(s) {
    if (session !== s) return;
    const stats = await s.pc.getStats();
    stats.forEach((x) => {
      if (x.type === "outbound-rtp" && x.kind === "video") {
        state.framesSent = x.framesSent || x.framesEncoded || 0;
        state.width = x.frameWidth || 0;
        state.height = x.frameHeight || 0;
        const codec = x.codecId ? stats.get(x.codecId) : null;
        if (codec) state.videoCodec = codec.mimeType;
      }
    });
    if (session !== s || s.pc.connectionState !== "connected") return;
    const codec = state.videoCodec ? state.videoCodec.replace(/^video\//, "") : "video";
    setStatus(`Publishing ${state.name}: ${codec} ${state.width}x${state.height}, ${state.framesSent} frames sent.`);
  }

  async function start(name, key) {
    name = (name || "").trim().replace(/^\/+/, "");
    if (name.indexOf("/") <= 0 || name.endsWith("/")) {
      setStatus("A stream name is app/stream, for example live/mystream.", true);
      return;
    }
    if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      setStatus("The camera needs a secure page: open this page over HTTPS, or from localhost.", true);
      return;
    }
    if (!window.RTCPeerConnection) {
      setStatus("This browser has no WebRTC (RTCPeerConnection).", true);
      return;
    }
    Object.assign(state, { name, httpStatus: null, location: null, connectionState: null, error: null,
                           videoCodec: null, framesSent: 0, width: 0, height: 0 });
    startButton.disabled = true;
    stopButton.disabled = false;
    nameInput.disabled = keyInput.disabled = true;
    const u = new URL(location.href);
    u.searchParams.set("stream", name);
    history.replaceState(null, "", u);
    const s = { pc: null, stream: null, location: null, auth: key ? { Authorization: "Bearer " + key } : {} };
    session = s;
    const current = () => session === s;
    try {
      setStatus("Asking for the camera and the microphone…");
      s.stream = await navigator.mediaDevices.getUserMedia({
        video: { width: { ideal: 1280 }, height: { ideal: 720 }, frameRate: { ideal: 30 } }, audio: true });
      if (!current()) {
        for (const t of s.stream.getTracks()) t.stop();
        return;
      }
      preview.srcObject = s.stream;
      const pc = new RTCPeerConnection();
      s.pc = pc;
      let h264 = true;
      for (const track of s.stream.getTracks()) {
        const t = pc.addTransceiver(track, { direction: "sendonly", streams: [s.stream] });
        if (track.kind === "video") h264 = preferH264(t);
      }
      if (h264 === false) {
        finish("This browser cannot send H.264, which the server needs for video.", true);
        return;
      }
      pc.onconnectionstatechange = () => {
        if (!current()) return;
        state.connectionState = pc.connectionState;
        if (pc.connectionState === "connected") {
          setStatus(`Publishing ${name}: connected (ICE and DTLS).`);
          clearInterval(statsTimer);
          statsTimer = setInterval(() => sampleStats(s).catch(() => {}), 1000);
        } else if (pc.connectionState === "disconnected") {
          setStatus("The connection is interrupted; waiting for it to come back…");
        } else if (pc.connectionState === "failed") {
          state.error = "the connection failed (ICE or DTLS)";
          finish("Publishing failed: the connection failed (ICE or DTLS), or the server ended the session.", true);
        }
      };
      await pc.setLocalDescription(await pc.createOffer());
      const url = whipUrl(name);
      setStatus(`Connecting to ${url}…`);
      const r = await fetch(url, { method: "POST", body: pc.localDescription.sdp,
        headers: Object.assign({ "Content-Type": "application/sdp" }, s.auth) });
      const body = await r.text();
      state.httpStatus = r.status;
      const where = r.headers.get("Location");
      if (r.status === 201 && where) s.location = state.location = new URL(where, url).href;
      if (!current()) {  // stopped while the offer was out: end what the server made
        if (s.location) fetch(s.location, { method: "DELETE", keepalive: true, headers: s.auth }).catch(() => {});
        return;
      }
      if (r.status !== 201) {
        // The body of a refusal is the server's reason (a key, a rule, a stream already published).
        state.error = body.trim() || `HTTP ${r.status}`;
        finish(`Publishing failed: ${state.error}.`, true);
        return;
      }
      await pc.setRemoteDescription({ type: "answer", sdp: body });
      if (pc.connectionState !== "connected") setStatus(`Connecting to ${url}: ICE and DTLS…`);
      $("watch-link").href = "./?stream=" + encodeURIComponent(name);
      $("watch").hidden = false;
    } catch (e) {
      if (!current()) return;
      state.error = String(e && e.message ? e.message : e);
      const camera = e && (e.name === "NotAllowedError" || e.name === "NotFoundError" || e.name === "NotReadableError");
      finish((camera ? "No camera or microphone: " : "Publishing failed: ") + state.error + ".", true);
    }
  }

  $("publish-form").addEventListener("submit", (e) => {
    e.preventDefault();
    start(nameInput.value, keyInput.value.trim());
  });
  stopButton.addEventListener("click", () => finish("Stopped."));
  window.addEventListener("pagehide", () => {
    if (session) finish("Stopped.");
  });
  window.addEventListener("error", (e) => state.errors.push(String(e.message)));
  document.addEventListener("securitypolicyviolation", (e) =>
    state.errors.push(`CSP: ${e.violatedDirective} ${e.blockedURI}`));

  const wanted = new URLSearchParams(location.search).get("stream");
  if (wanted) nameInput.value = wanted;
  if (!window.isSecureContext) {
    setStatus("The camera needs a secure page: open this page over HTTPS, or from localhost.", true);
  }
})();

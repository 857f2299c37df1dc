// The Sluice page: lists the streams (GET api/v1/streams) and the relays (GET api/v1/relays),
// shows the server's figures (GET api/v1/server) and plays a live stream as HTTP-FLV with mpegts.js
// or as HLS with hls.js (low-latency mode; Safari's own HLS where there is no Media Source
// Extensions), or over WebRTC (WHEP: a plain RTCPeerConnection, no library). Plain JS, no build step.
// The plots, the thumbnails and each stream's details (its plots, the OBS settings) are plots.js's.
// URLs are relative to the page, so it also works behind a reverse proxy under a path prefix.
// ?stream=app/name in the page's URL plays that stream at once, &protocol=hls as HLS,
// &protocol=webrtc over WebRTC.
"use strict";

(function () {
  const REFRESH_MS = 2000;
  const RETRY_MS = [1000, 2000, 5000, 10000];

  const $ = (id) => document.getElementById(id);
  const video = $("video");
  const playerStatus = $("player-status");
  const playerTitle = $("player-title");
  const nameInput = $("play-name");
  const stopButton = $("stop");
  const protocolSelect = $("play-protocol");
  const PROTOCOL_NAMES = { flv: "HTTP-FLV", hls: "HLS", webrtc: "WebRTC" };

  // What a test (or a curious user in the console) can read.
  // hls: the hls.js instance while one plays; hlsErrors: every hls.js ERROR event of this page.
  // webrtc: the WHEP session while one plays ({ pc, location, httpStatus, connectionState, error });
  // webrtcDeletes: the status of each DELETE the page sent for a session it ended.
  const state = { playing: null, protocol: "flv", streams: [], server: null, apiStatus: null, errors: [],
                  hls: null, hlsErrors: [], webrtc: null, webrtcDeletes: [] };
  window.sluicePage = state;

  // ---- formatting ----

  function bytes(n) {
    if (typeof n !== "number") return "–";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
  }

  function duration(s) {
    if (typeof s !== "number") return "–";
    s = Math.floor(s);
    const d = Math.floor(s / 86400);
    const h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const parts = [];
    if (d) parts.push(d + "d");
    if (d || h) parts.push(h + "h");
    if (d || h || m) parts.push(m + "m");
    parts.push((s % 60) + "s");
    return parts.join(" ");
  }

  function videoText(v) {
    if (!v) return "none";
    let t = v.codec || "?";
    if (v.profile) t += " " + v.profile;
    if (v.level) t += "@" + (v.codec === "H264" ? (v.level / 10).toFixed(1) : v.level);
    if (v.width && v.height) t += ", " + v.width + "x" + v.height;
    return t;
  }

  function audioText(a) {
    if (!a) return "none";
    let t = a.profile || a.codec || "?";
    if (a.sample_rate) t += ", " + a.sample_rate + " Hz";
    if (a.channels) t += ", " + a.channels + " ch";
    return t;
  }

  // Builds an element; children are nodes or strings (always text: stream names come from
  // publishers and are never parsed as HTML).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) e.append(c instanceof Node ? c : String(c));
    return e;
  }

  function showMessage(id, text) {
    const p = $(id);
    p.textContent = text || "";
    p.hidden = !text;
  }

  // ---- the API ----

  // The API answers only addresses in the server's http.api.allow (loopback by default).
  function apiProblem(status) {
    if (status === 403) {
      return "The server's API is not open to your address (http.api.allow in the server's configuration), " +
        "so streams and figures cannot be shown here. You can still play a stream by typing its name above.";
    }
    if (status === 0) return "Cannot reach the server.";
    return "The server's API answered HTTP " + status + ".";
  }

  async function getJson(path) {
    try {
      const r = await fetch(path, { cache: "no-store", headers: { Accept: "application/json" } });
      if (!r.ok) return { status: r.status };
      return { status: r.status, body: await r.json() };
    } catch (e) {
      return { status: 0 };
    }
  }

  function renderServer(s) {
    state.server = s;
    $("version").textContent = s.name + " " + s.version;
    const c = s.connections || {};
    const b = s.bytes || {};
    const rows = [
      ["Uptime", duration(s.uptime_s)],
      ["Connections", `${c.total} of ${c.max} (RTMP ${c.rtmp}, HTTP ${c.http})`],
      ["Streams", `${s.streams ? s.streams.live : "–"} live of ${s.streams ? s.streams.total : "–"}`],
      ["HTTP requests", String(s.http_requests)],
      ["HTTP bytes", `in ${bytes(b.http_in)}, out ${bytes(b.http_out)}`],
    ];
    if (typeof b.rtmp_in_open_connections === "number") {
      rows.push(["RTMP bytes (open)", `in ${bytes(b.rtmp_in_open_connections)}, out ${bytes(b.rtmp_out_open_connections)}`]);
    }
    const dl = $("server-figures");
    dl.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  }

  function renderStreams(list) {
    state.streams = list;
    const body = $("streams-body");
    const plots = window.SluicePlots;  // plots.js: thumbnails, and the details a row can open
    const rows = list.flatMap((s) => {
      const buttons = [];
      for (const protocol of ["flv", "hls", "webrtc"]) {
        if (protocol === "hls" && !hlsOffered(s)) continue;
        const playing = s.name === state.playing && protocol === state.protocol;
        const suffix = { flv: "", hls: " HLS", webrtc: " WebRTC" }[protocol];
        const b = el("button", { type: "button", class: protocol === "flv" ? "" : "secondary",
          "data-protocol": protocol, title: (protocol === "webrtc" ? "Play over " : "Play as ") + PROTOCOL_NAMES[protocol],
          textContent: (playing ? "Playing" : "Play") + suffix });
        b.addEventListener("click", () => play(s.name, protocol));
        buttons.push(b);
      }
      const open = !!plots && plots.isOpen(s.name);
      if (plots) {
        const b = el("button", { type: "button", class: "secondary", "data-details": s.name,
          title: "Plots and OBS settings", textContent: open ? "Hide details" : "Details" });
        b.addEventListener("click", () => {
          plots.toggle(s.name);
          renderStreams(state.streams);
        });
        buttons.push(b);
      }
      const thumbnail = plots ? plots.thumbnail(s) : null;
      let players = s.http_flv_players ? `${s.players} (${s.http_flv_players} HTTP-FLV)` : String(s.players);
      if (s.hls && s.hls.viewers) players += ` + ${s.hls.viewers} HLS`;
      const row = el("tr", { "data-stream": s.name, class: s.name === state.playing ? "playing" : "" },
        el("td", {}, ...(thumbnail ? [thumbnail] : []), s.name),
        el("td", {}, el("span", { class: "badge " + (s.live ? "live" : "idle") }, s.live ? "live" : "waiting")),
        el("td", {}, videoText(s.video)),
        el("td", {}, audioText(s.audio)),
        el("td", { class: "num" }, s.live ? `${s.bitrate_in_kbps} kbit/s` : "–"),
        el("td", { class: "num" }, players),
        el("td", { class: "actions" }, ...buttons));
      return open ? [row, plots.detailsRow(s.name, row.cells.length)] : [row];
    });
    body.replaceChildren(...rows);
    if (plots) plots.prune(list.map((s) => s.name));
    $("streams-empty").hidden = list.length !== 0;
    $("streams-table").hidden = list.length === 0;
  }

  // Whether a stream's row offers HLS. The API's "hls" of a stream is its muxer (null while none
  // runs: with on_demand, until the first playlist request); "hls_variant", where the server gives
  // it, is the app's setting (null: HLS is off). Without either, the button is offered and a 404
  // for the playlist says HLS is off.
  function hlsOffered(s) {
    if (s.hls) return true;
    if ("hls_variant" in s) return !!s.hls_variant;
    return true;
  }

  // Push targets and pulls (docs/relays.md); the section shows only when there are some.
  function renderRelays(r) {
    const rows = [];
    for (const t of r.push || []) {
      rows.push(["push", t.stream, t.url, t.state, t.connects, bytes(t.bytes_out), t.last_error]);
    }
    for (const p of r.pull || []) {
      rows.push(["pull", p.stream, p.upstream, p.state, p.connects, bytes(p.bytes_in), p.last_error]);
    }
    $("relays-body").replaceChildren(...rows.map(([kind, stream, peer, st, connects, b, err]) =>
      el("tr", { "data-relay": kind + " " + stream + " " + peer },
        el("td", {}, kind),
        el("td", {}, stream),
        el("td", {}, peer),
        el("td", {}, el("span", { class: "badge " + (st === "live" ? "live" : "idle") }, st)),
        el("td", { class: "num" }, String(connects)),
        el("td", { class: "num" }, b),
        el("td", {}, err || ""))));
    $("relays").hidden = rows.length === 0;
  }

  let refreshTimer = null;
  async function refresh() {
    clearTimeout(refreshTimer);
    const [server, streams, relays] = await Promise.all([getJson("api/v1/server"), getJson("api/v1/streams"),
      getJson("api/v1/relays")]);
    if (relays.body) renderRelays(relays.body);
    state.apiStatus = streams.status;
    if (server.body) {
      renderServer(server.body);
      showMessage("server-message", "");
    } else {
      showMessage("server-message", apiProblem(server.status));
    }
    if (Array.isArray(streams.body)) {
      renderStreams(streams.body);
      showMessage("streams-message", "");
    } else {
      showMessage("streams-message", apiProblem(streams.status));
      $("streams-table").hidden = true;
      $("streams-empty").hidden = true;
    }
    refreshTimer = setTimeout(refresh, REFRESH_MS);
  }
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });

  // ---- the player ----

  let player = null;  // mpegts.js
  let hls = null;     // hls.js
  let webrtc = null;  // the WHEP session: { pc, location }
  let retryTimer = null;
  let retries = 0;

  function setStatus(text) {
    playerStatus.textContent = text;
  }

  function flvUrl(name) {
    const slash = name.indexOf("/");
    const app = name.slice(0, slash);
    const stream = name.slice(slash + 1);
    return new URL(encodeURIComponent(app) + "/" + encodeURIComponent(stream) + ".flv", document.baseURI).href;
  }

  function hlsUrl(name) {
    const slash = name.indexOf("/");
    const app = name.slice(0, slash);
    const stream = name.slice(slash + 1);
    return new URL(encodeURIComponent(app) + "/" + encodeURIComponent(stream) + "/index.m3u8", document.baseURI).href;
  }

  function whepUrl(name) {
    const slash = name.indexOf("/");
    const app = name.slice(0, slash);
    const stream = name.slice(slash + 1);
    return new URL(encodeURIComponent(app) + "/" + encodeURIComponent(stream) + "/whep", document.baseURI).href;
  }

  // Ends the WHEP session: the peer connection closes and DELETE on its Location tells the server
  // (keepalive, so it is sent even when the page is closing).
  function endWebrtc() {
    if (!webrtc) return;
    const w = webrtc;
    webrtc = null;
    state.webrtc = null;
    const close = () => {
      try {
        w.pc.close();
      } catch (e) {
        // closed either way
      }
    };
    // DELETE first: closing the connection sends DTLS close_notify, which ends the session too, and
    // the DELETE would find none.
    if (w.location) {
      fetch(w.location, { method: "DELETE", keepalive: true }).then(
        (r) => state.webrtcDeletes.push(r.status), () => state.webrtcDeletes.push(0)).finally(close);
    } else {
      close();
    }
    if (video.srcObject) video.srcObject = null;
  }

  function destroyPlayer() {
    clearTimeout(retryTimer);
    endWebrtc();
    if (hls) {
      const h = hls;
      hls = null;
      state.hls = null;
      try {
        h.destroy();
      } catch (e) {
        // gone either way
      }
    }
    if (video.getAttribute("src") && !video.src.startsWith("blob:")) {
      video.removeAttribute("src");  // Safari's own HLS
      video.load();
    }
    if (!player) return;
    const p = player;
    player = null;
    try {
      p.pause();
      p.unload();
      p.detachMediaElement();
      p.destroy();
    } catch (e) {
      // a player that failed half-way may refuse some of these; it is gone either way
    }
  }

  // The stream ended (the publisher left) or failed: try again, more slowly each time. An app that
  // waits for its publisher (the default) holds the request until the stream is back.
  function scheduleRetry(why) {
    const name = state.playing;
    destroyPlayer();
    const delay = RETRY_MS[Math.min(retries, RETRY_MS.length - 1)];
    retries++;
    setStatus(`${why} Trying again in ${delay / 1000} s…`);
    retryTimer = setTimeout(() => {
      if (state.playing === name) start(name);
    }, delay);
  }

  function startHls(name) {
    destroyPlayer();
    const url = hlsUrl(name);
    if (window.Hls && Hls.isSupported()) {
      // lowLatencyMode: blocking playlist reloads and parts when the playlist has them (the app's
      // variant low-latency); the other variants play as plain HLS with it on. A live stream that
      // starts (or falls) behind its target latency plays up to 1.5x until it is back: without it
      // hls.js keeps whatever distance it started at, seconds on a busy machine.
      hls = new Hls({ lowLatencyMode: true, backBufferLength: 30, liveDurationInfinity: true,
        maxLiveSyncPlaybackRate: 1.5 });
      state.hls = hls;
      let recovered = false;
      hls.on(Hls.Events.ERROR, (event, data) => {
        const code = data.response && data.response.code;
        const reason = data.reason || (data.error && data.error.message) || null;
        state.hlsErrors.push({ type: data.type, details: data.details, fatal: !!data.fatal, code: code || null,
          reason, at: Date.now() });
        if (!data.fatal) return;  // hls.js retries those itself
        if (data.type === Hls.ErrorTypes.MEDIA_ERROR && !recovered) {
          recovered = true;
          hls.recoverMediaError();
          return;
        }
        if (code === 404) {
          scheduleRetry("No HLS for this stream: the stream is not live, or HLS is off for its app.");
        } else {
          scheduleRetry(`Playback error: ${data.type} ${data.details}${code ? " (HTTP " + code + ")" : ""}.`);
        }
      });
      hls.on(Hls.Events.MANIFEST_PARSED, () => {
        const p = video.play();
        if (p && typeof p.catch === "function") p.catch((e) => setStatus(`Press play to start (${e.name}).`));
      });
      hls.on(Hls.Events.FRAG_BUFFERED, () => {
        retries = 0;
      });
      hls.loadSource(url);
      hls.attachMedia(video);
    } else if (video.canPlayType("application/vnd.apple.mpegurl")) {
      video.src = url;  // Safari plays HLS (and LL-HLS) itself
      const p = video.play();
      if (p && typeof p.catch === "function") p.catch((e) => setStatus(`Press play to start (${e.name}).`));
    } else {
      setStatus("This browser cannot play HLS here (no Media Source Extensions).");
      return;
    }
    setStatus(`Connecting to ${url}…`);
  }

  // WHEP (docs/webrtc.md): a recvonly video and audio offer POSTed to /APP/STREAM/whep; the answer
  // (201, with the session's Location) is set and the tracks play in the <video>. Any other status
  // is a refusal whose body is the server's reason, shown as it is.
  async function startWebrtc(name) {
    destroyPlayer();
    const url = whepUrl(name);
    const pc = new RTCPeerConnection();
    const w = { pc, location: null, httpStatus: null, connectionState: pc.connectionState, error: null };
    webrtc = w;
    state.webrtc = w;
    const current = () => webrtc === w;
    const media = new MediaStream();
    pc.addTransceiver("video", { direction: "recvonly" });
    pc.addTransceiver("audio", { direction: "recvonly" });
    pc.ontrack = (e) => {
      if (!current()) return;
      media.addTrack(e.track);
      if (video.srcObject !== media) video.srcObject = media;
      const p = video.play();
      if (p && typeof p.catch === "function") p.catch((err) => setStatus(`Press play to start (${err.name}).`));
    };
    pc.onconnectionstatechange = () => {
      if (!current()) return;
      w.connectionState = pc.connectionState;
      if (pc.connectionState === "connected") {
        retries = 0;
        setStatus(`Connected over WebRTC to ${name}; waiting for the picture…`);
      } else if (pc.connectionState === "disconnected") {
        setStatus("WebRTC: the connection is interrupted; waiting for it to come back…");
      } else if (pc.connectionState === "failed") {
        w.error = "the connection failed (ICE or DTLS)";
        scheduleRetry("WebRTC failed: the connection failed (ICE or DTLS), or the stream ended.");
      }
    };
    setStatus(`Connecting to ${url} (WebRTC)…`);
    try {
      await pc.setLocalDescription(await pc.createOffer());
      const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/sdp" },
        body: pc.localDescription.sdp });
      const body = await r.text();
      w.httpStatus = r.status;
      const location = r.headers.get("Location");
      if (r.status === 201 && location) w.location = new URL(location, url).href;
      if (!current()) {  // stopped or replaced while the offer was out: end what the server made
        if (w.location) fetch(w.location, { method: "DELETE", keepalive: true }).catch(() => {});
        return;
      }
      if (r.status !== 201) {
        const reason = body.trim() || `HTTP ${r.status}`;
        w.error = reason;
        // Not live yet (404) or a limit (503): try again. A refusal (a key, a rule) or WebRTC off
        // in the server's configuration will not change by itself.
        if ((r.status === 404 && !/WebRTC is off/.test(reason)) || r.status === 503) {
          scheduleRetry(`WebRTC failed: ${reason}.`);
        } else {
          endWebrtc();
          setStatus(`WebRTC failed: ${reason}.`);
        }
        return;
      }
      await pc.setRemoteDescription({ type: "answer", sdp: body });
    } catch (e) {
      if (!current()) return;
      w.error = String(e && e.message ? e.message : e);
      scheduleRetry(`WebRTC failed: ${w.error}.`);
    }
  }

  function start(name) {
    if (state.protocol === "hls") {
      startHls(name);
      return;
    }
    if (state.protocol === "webrtc") {
      startWebrtc(name);
      return;
    }
    destroyPlayer();
    const url = flvUrl(name);
    player = mpegts.createPlayer(
      { type: "flv", isLive: true, url: url },
      {
        enableStashBuffer: false, // low latency
        liveBufferLatencyChasing: true,
        autoCleanupSourceBuffer: true,
      });
    player.on(mpegts.Events.ERROR, (type, detail, info) => {
      const msg = info && (info.msg || info.code) ? ` (${info.msg || info.code})` : "";
      scheduleRetry(`Playback error: ${type} ${detail}${msg}.`);
    });
    player.on(mpegts.Events.LOADING_COMPLETE, () => scheduleRetry("The stream ended."));
    player.on(mpegts.Events.MEDIA_INFO, () => {
      retries = 0;
    });
    player.attachMediaElement(video);
    player.load();
    const p = player.play();
    if (p && typeof p.catch === "function") {
      p.catch((e) => setStatus(`Press play to start (${e.name}).`));
    }
    setStatus(`Connecting to ${url}…`);
  }

  function play(name, protocol) {
    name = (name || "").trim().replace(/^\/+/, "");
    if (/\/index\.m3u8$/.test(name)) {
      name = name.replace(/\/index\.m3u8$/, "");
      protocol = protocol || "hls";
    }
    name = name.replace(/\.flv$/, "");
    protocol = protocol === "hls" || protocol === "webrtc" ? protocol : "flv";
    if (name.indexOf("/") <= 0 || name.endsWith("/")) {
      setStatus("A stream name is app/stream, for example live/mystream.");
      return;
    }
    if (protocol === "flv" && (!window.mpegts || !mpegts.getFeatureList().mseLivePlayback)) {
      setStatus("This browser cannot play live streams here (no Media Source Extensions).");
      return;
    }
    if (protocol === "webrtc" && !window.RTCPeerConnection) {
      setStatus("This browser has no WebRTC (RTCPeerConnection).");
      return;
    }
    state.playing = name;
    state.protocol = protocol;
    retries = 0;
    nameInput.value = name;
    protocolSelect.value = protocol;
    playerTitle.textContent = `Playing ${name} (${PROTOCOL_NAMES[protocol]})`;
    stopButton.disabled = false;
    // Keep the stream in the address bar, so a reload or a shared link plays it again.
    const u = new URL(location.href);
    u.searchParams.set("stream", name);
    if (protocol !== "flv") u.searchParams.set("protocol", protocol);
    else u.searchParams.delete("protocol");
    history.replaceState(null, "", u);
    start(name);
    if (state.apiStatus === 200) renderStreams(state.streams);  // marks the row being played
  }

  function stop() {
    state.playing = null;
    destroyPlayer();
    video.removeAttribute("src");
    video.load();
    playerTitle.textContent = "Player";
    stopButton.disabled = true;
    setStatus("Stopped.");
    const u = new URL(location.href);
    u.searchParams.delete("stream");
    u.searchParams.delete("protocol");
    history.replaceState(null, "", u);
    if (state.apiStatus === 200) renderStreams(state.streams);
  }

  // While playing: picture size, buffered seconds ahead, dropped frames; for HLS the distance to
  // the live edge. Over WebRTC (no buffer to speak of) the size and the dropped frames.
  setInterval(() => {
    if (!state.playing || video.readyState < 2) return;
    if (webrtc && video.srcObject) {
      if (webrtc.pc.connectionState !== "connected") return;  // its own status says why
      const q = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : null;
      let t = `Playing ${state.playing} over WebRTC: ${video.videoWidth}x${video.videoHeight}`;
      if (q) t += `, ${q.droppedVideoFrames} frames dropped`;
      setStatus(t + ".");
      return;
    }
    if (!player && !hls && !video.getAttribute("src")) return;
    const b = video.buffered;
    const ahead = b.length ? b.end(b.length - 1) - video.currentTime : 0;
    const q = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : null;
    let t = `Playing ${state.playing}: ${video.videoWidth}x${video.videoHeight}, ${ahead.toFixed(1)} s buffered`;
    if (q) t += `, ${q.droppedVideoFrames} frames dropped`;
    if (hls && typeof hls.latency === "number" && isFinite(hls.latency)) t += `, ${hls.latency.toFixed(1)} s behind live`;
    setStatus(t + ".");
  }, 1000);

  $("play-form").addEventListener("submit", (e) => {
    e.preventDefault();
    play(nameInput.value, protocolSelect.value);
  });
  stopButton.addEventListener("click", stop);
  window.addEventListener("pagehide", endWebrtc);  // the server's session ends with the page
  window.addEventListener("error", (e) => state.errors.push(String(e.message)));
  document.addEventListener("securitypolicyviolation", (e) =>
    state.errors.push(`CSP: ${e.violatedDirective} ${e.blockedURI}`));

  if (window.mpegts) {
    mpegts.LoggingControl.enableVerbose = false;
    mpegts.LoggingControl.enableDebug = false;
    mpegts.LoggingControl.enableInfo = false;
  }
  const query = new URLSearchParams(location.search);
  const wanted = query.get("stream");
  if (wanted) play(wanted, query.get("protocol"));
  refresh();
})();

// Drives headless Chromium (playwright-core) for tests/integration/hls_players_test.py: the built-in
// page (web/index.html, web/app.js) plays streams as HLS with hls.js.
//
//   node hls_page_browser.js BASE NODE_MODULES CHROMIUM SPEC_JSON
//
// SPEC_JSON is a list of {"stream": "app/name", "seconds": N, "seekBackS": B (optional)}. For each, one after the other, a
// new page opens BASE/, waits for the stream's row, clicks its "Play HLS" button, and samples the
// <video> and the hls.js instance (window.sluicePage.hls) every 250 ms until currentTime has run
// N seconds past the first frame (bounded by a timeout). What it saw goes to stdout as one JSON
// line: per stream the samples, the hls.js ERROR events, the page's own errors, the requests the
// player made (playlists, blocking reloads, parts, segments) and the failed ones.
"use strict";

const [base, nodeModules, chromium, specArg] = process.argv.slice(2);
const specs = JSON.parse(specArg);
const { launchChromium } = require("./chromium_launch");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function playOne(browser, spec) {
  const out = { stream: spec.stream, pageErrors: [], consoleErrors: [], failedRequests: [], badResponses: [],
                requests: { playlists: 0, blocking: 0, skip: 0, parts: 0, segments: 0, inits: 0 }, samples: [] };
  const page = await browser.newPage();
  page.on("pageerror", (e) => out.pageErrors.push(String(e && e.message ? e.message : e)));
  page.on("console", (m) => {
    if (m.type() === "error") out.consoleErrors.push(m.text());
  });
  page.on("request", (r) => {
    const u = new URL(r.url());
    const p = u.pathname;
    if (p.endsWith("/index.m3u8")) {
      out.requests.playlists++;
      if (u.searchParams.has("_HLS_msn")) out.requests.blocking++;
      if (u.searchParams.get("_HLS_skip")) out.requests.skip++;
    } else if (/\/part\d+\.\d+\.m4s$/.test(p)) {
      out.requests.parts++;
    } else if (/\/seg\d+\.(ts|m4s)$/.test(p)) {
      out.requests.segments++;
    } else if (/\/init\d+\.mp4$/.test(p)) {
      out.requests.inits++;
    }
  });
  page.on("requestfailed", (r) => {
    // Requests still open when the page closes (a held playlist reload) are aborted: not failures.
    if (!out.closing) out.failedRequests.push(`${r.url()} ${r.failure() && r.failure().errorText}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) out.badResponses.push(`${r.status()} ${r.url()}`);
  });

  const started = Date.now();
  await page.goto(`${base}/`, { waitUntil: "load", timeout: 15000 });
  out.hlsLoaded = await page.evaluate(() => typeof window.Hls === "function" && Hls.isSupported());
  out.hlsVersion = await page.evaluate(() => (window.Hls ? Hls.version : null));
  const button = `#streams-body tr[data-stream="${spec.stream}"] button[data-protocol="hls"]`;
  await page.waitForSelector(button, { timeout: 10000 });
  await page.evaluate(() => {
    window.__waiting = 0;
    document.getElementById("video").addEventListener("waiting", () => window.__waiting++);
  });
  await page.click(button);
  const clicked = Date.now();

  const deadline = clicked + (spec.seconds + 15) * 1000;
  let first = null;
  let last = null;
  while (Date.now() < deadline) {
    const s = await page.evaluate(() => {
      const v = document.getElementById("video");
      const h = window.sluicePage && window.sluicePage.hls;
      const details = h && h.levels && h.levels[h.currentLevel >= 0 ? h.currentLevel : 0] &&
        h.levels[h.currentLevel >= 0 ? h.currentLevel : 0].details;
      const b = v.buffered;
      const date = h && h.playingDate;
      return {
        now: Date.now(),
        currentTime: v.currentTime, paused: v.paused, readyState: v.readyState, playbackRate: v.playbackRate,
        videoWidth: v.videoWidth, videoHeight: v.videoHeight,
        bufferedEnd: b.length ? b.end(b.length - 1) : null,
        ranges: Array.from({ length: b.length }, (_, i) => [b.start(i), b.end(i)]),
        waiting: window.__waiting,
        latency: h && isFinite(h.latency) ? h.latency : null,
        targetLatency: h && isFinite(h.targetLatency) ? h.targetLatency : null,
        liveSyncPosition: h && h.liveSyncPosition !== null && isFinite(h.liveSyncPosition) ? h.liveSyncPosition : null,
        wallLatency: date ? (Date.now() - date.getTime()) / 1000 : null,
        lowLatencyMode: h ? h.lowLatencyMode : null,
        partTarget: details ? details.partTarget : null,
        canBlockReload: details ? !!details.canBlockReload : null,
        live: details ? details.live : null,
        title: document.getElementById("player-title").textContent,
        status: document.getElementById("player-status").textContent,
        row: (() => {
          const tr = document.querySelector(`#streams-body tr[data-stream="${CSS.escape(window.sluicePage.playing || "")}"]`);
          return tr ? Array.from(tr.cells, (c) => c.textContent.trim()) : null;
        })(),
      };
    });
    s.wall = (s.now - clicked) / 1000;
    out.samples.push(s);
    last = s;
    if (!first && s.currentTime > 0 && !s.paused) first = s;
    // seekBackS: put the player that much further behind the live edge, as a slow start on a busy
    // machine does; the page has to play faster until it is back. It happens once the target lies
    // inside the buffered range being played: a seek to before its start is a start gap, which
    // hls.js may skip (bufferSeekOverHole), not a hole in the stream.
    const buffered = s.ranges.find(([a, b]) => a <= s.currentTime && s.currentTime <= b);
    if (spec.seekBackS && first && out.seekedBackAt === undefined && buffered &&
        s.currentTime - spec.seekBackS >= buffered[0] + 0.3) {
      out.seekTarget = await page.evaluate((back) => {
        const v = document.getElementById("video");
        v.currentTime -= back;
        return { to: v.currentTime, ranges: Array.from({ length: v.buffered.length }, (_, i) => [v.buffered.start(i), v.buffered.end(i)]) };
      }, spec.seekBackS);
      out.seekedBackAt = out.samples.length;
    }
    if (first && s.currentTime - first.currentTime >= spec.seconds) break;
    await sleep(250);
  }
  out.firstFrameAfterS = first ? first.wall : null;
  out.stalls = first ? last.waiting - first.waiting : null;  // "waiting" events after the start
  out.advancedS = first ? last.currentTime - first.currentTime : 0;
  out.overWallS = first ? last.wall - first.wall : 0;
  out.last = last;
  out.loadS = (clicked - started) / 1000;
  const page_state = await page.evaluate(() => ({
    hlsErrors: window.sluicePage.hlsErrors.slice(),
    appErrors: window.sluicePage.errors.slice(),
    url: location.href,
  }));
  Object.assign(out, page_state);
  out.closing = true;
  await page.close();
  delete out.closing;
  return out;
}

async function main() {
  const browser = await launchChromium(nodeModules, chromium, { noQuic: true });
  const results = [];
  try {
    for (const spec of specs) results.push(await playOne(browser, spec));
  } finally {
    await browser.close();
  }
  return results;
}

main().then(
  (r) => {
    process.stdout.write(JSON.stringify(r) + "\n");
  },
  (e) => {
    process.stdout.write(JSON.stringify({ fatal: String(e && e.stack ? e.stack : e) }) + "\n");
    process.exitCode = 1;
  });

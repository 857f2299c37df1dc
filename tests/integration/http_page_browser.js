// Drives headless Chromium (Debian's, through playwright-core from the build's web/node_modules)
// against Sluice's built-in page, for http_page_test.py. Prints one JSON object on stdout.
//
//   node http_page_browser.js BASE_URL STREAM NODE_MODULES CHROMIUM [TIMEOUT_S]
//
// 1. Opens BASE_URL/?stream=STREAM and polls the <video> until its currentTime has advanced by
//    2 s or more (bounded by TIMEOUT_S), and until STREAM appears in the page's stream list.
// 2. Opens the page again with the API answering 403 (routed in the browser), and reads the
//    message the page shows.
"use strict";

const [base, stream, nodeModules, chromium, timeoutArg] = process.argv.slice(2);
const timeoutMs = (Number(timeoutArg) || 30) * 1000;
const { launchChromium } = require("./chromium_launch");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const result = { pageErrors: [], consoleErrors: [], failedRequests: [] };
  const browser = await launchChromium(nodeModules, chromium, { noQuic: true });
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => result.pageErrors.push(String(e && e.message ? e.message : e)));
    page.on("console", (m) => {
      if (m.type() === "error") result.consoleErrors.push(m.text());
    });
    page.on("requestfailed", (r) => {
      // The player's own request is aborted when the page closes: not a failure of the page.
      if (!r.url().endsWith(".flv")) result.failedRequests.push(`${r.url()} ${r.failure() && r.failure().errorText}`);
    });
    const url = `${base}/?stream=${encodeURIComponent(stream)}`;
    const started = Date.now();
    const response = await page.goto(url, { waitUntil: "load", timeout: 15000 });
    result.pageStatus = response ? response.status() : 0;
    result.mpegtsLoaded = await page.evaluate(() => typeof window.mpegts === "object" && !!window.mpegts.createPlayer);
    result.mseLivePlayback = await page.evaluate(() => !!(window.mpegts && mpegts.getFeatureList().mseLivePlayback));

    // Poll the video: the first sample with currentTime > 0 is the start; success is currentTime
    // 2 s or more past it. Wall time is recorded beside it.
    const deadline = started + timeoutMs;
    let first = null;
    let last = null;
    let listed = null;
    const samples = [];
    while (Date.now() < deadline) {
      const s = await page.evaluate((name) => {
        const v = document.getElementById("video");
        const row = document.querySelector(`#streams-body tr[data-stream="${CSS.escape(name)}"]`);
        return {
          currentTime: v.currentTime, paused: v.paused, readyState: v.readyState,
          videoWidth: v.videoWidth, videoHeight: v.videoHeight,
          row: row ? Array.from(row.cells, (c) => c.textContent.trim()) : null,
          status: document.getElementById("player-status").textContent,
          title: document.getElementById("player-title").textContent,
          figures: document.getElementById("server-figures").textContent,
          relays: document.getElementById("relays").hidden ? null :
            Array.from(document.querySelectorAll("#relays-body tr"), (tr) => Array.from(tr.cells, (c) => c.textContent.trim())),
          errors: window.sluicePage ? window.sluicePage.errors.slice() : ["no sluicePage"],
        };
      }, stream);
      s.wall = (Date.now() - started) / 1000;
      samples.push([s.wall, s.currentTime, s.readyState]);
      last = s;
      if (s.row) listed = s.row;
      if (!first && s.currentTime > 0) first = s;
      // The list refreshes every 2 s and its first fetch can race the page's own player, so
      // wait for a listing that counts it.
      const countsPlayer = listed && listed.length >= 6 && /^1( |$)/.test(listed[5]);
      if (first && s.currentTime - first.currentTime >= 2 && countsPlayer) break;
      await sleep(250);
    }
    result.firstFrameAfterS = first ? first.wall : null;
    result.advancedS = first ? last.currentTime - first.currentTime : 0;
    result.overWallS = first ? last.wall - first.wall : 0;
    result.videoWidth = last.videoWidth;
    result.videoHeight = last.videoHeight;
    result.paused = last.paused;
    result.readyState = last.readyState;
    result.listedRow = listed;
    result.playerStatus = last.status;
    result.playerTitle = last.title;
    result.serverFigures = last.figures;
    result.relays = last.relays;
    result.appErrors = last.errors;
    result.samples = samples.slice(-12);
    await page.close();

    // The API refused (an address not in http.api.allow): the page says so.
    const refused = await browser.newPage();
    refused.on("pageerror", (e) => result.pageErrors.push("403 page: " + String(e && e.message ? e.message : e)));
    await refused.route("**/api/v1/**", (route) =>
      route.fulfill({ status: 403, contentType: "text/plain", body: "403 Forbidden\n" }));
    await refused.goto(`${base}/`, { waitUntil: "load", timeout: 15000 });
    await refused.waitForFunction(() => !document.getElementById("streams-message").hidden, null, { timeout: 10000 });
    result.forbiddenMessage = await refused.evaluate(() => document.getElementById("streams-message").textContent);
    result.forbiddenServerMessage = await refused.evaluate(() => document.getElementById("server-message").textContent);
    await refused.close();
  } finally {
    await browser.close();
  }
  return result;
}

main().then(
  (r) => {
    process.stdout.write(JSON.stringify(r) + "\n");
  },
  (e) => {
    process.stdout.write(JSON.stringify({ fatal: String(e && e.stack ? e.stack : e) }) + "\n");
    process.exitCode = 1;
  });

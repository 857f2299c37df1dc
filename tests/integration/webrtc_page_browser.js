// Drives headless Chromium (Debian's, through playwright-core from the build's web/node_modules)
// against Sluice's built-in pages over WebRTC, for webrtc_page_test.py. Prints JSON objects on
// stdout, one a line.
//
//   node webrtc_page_browser.js play BASE_URL APP/STREAM NODE_MODULES CHROMIUM [TIMEOUT_S]
//     1. Opens BASE_URL/, waits for APP/STREAM in the stream list and clicks its "Play WebRTC"
//        button; polls the <video> until its currentTime has advanced by 2 s or more (bounded by
//        TIMEOUT_S), with the player's status line and the page's WHEP session beside it.
//     2. Clicks Stop: the page DELETEs the session (its status is read from the page).
//     3. Opens BASE_URL/?stream=noapp/absent&protocol=webrtc (no such app: 404) and reads the
//        failure the page shows.
//     Prints one object.
//
//   node webrtc_page_browser.js publish BASE_URL APP/STREAM NODE_MODULES CHROMIUM [TIMEOUT_S] [KEY]
//     Opens BASE_URL/publish.html with Chromium's fake camera and microphone
//     (--use-fake-device-for-media-stream, --use-fake-ui-for-media-stream), types the name (and
//     KEY), clicks Start and waits until ICE and DTLS are connected and frames are being sent:
//     prints {"phase": "publishing", ...}. Then it keeps publishing until a line arrives on stdin
//     (or TIMEOUT_S more seconds pass), clicks Stop and prints {"phase": "stopped", ...}.
"use strict";

const readline = require("readline");

const [mode, base, stream, nodeModules, chromium, timeoutArg, key] = process.argv.slice(2);
const timeoutMs = (Number(timeoutArg) || 30) * 1000;
const { launchChromium } = require("./chromium_launch");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const print = (o) => process.stdout.write(JSON.stringify(o) + "\n");

async function launch() {
  return launchChromium(nodeModules, chromium, { webrtc: true, fakeMedia: true });
}

function watch(page, result) {
  page.on("pageerror", (e) => result.pageErrors.push(String(e && e.message ? e.message : e)));
  page.on("console", (m) => {
    if (m.type() === "error") result.consoleErrors.push(m.text());
  });
}

async function play(browser, result) {
  const page = await browser.newPage();
  watch(page, result);
  const requests = [];
  page.on("request", (r) => {
    if (/\/whep(\/|$)/.test(r.url())) requests.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  const started = Date.now();
  await page.goto(`${base}/`, { waitUntil: "load", timeout: 15000 });
  // Every text the status line shows, however briefly.
  await page.evaluate(() => {
    const p = document.getElementById("player-status");
    window.statusTexts = [p.textContent];
    new MutationObserver(() => window.statusTexts.push(p.textContent)).observe(p, { childList: true, characterData: true, subtree: true });
  });
  const button = `#streams-body tr[data-stream="${stream}"] button[data-protocol="webrtc"]`;
  await page.waitForSelector(button, { timeout: 15000 });
  result.buttonText = await page.textContent(button);
  const clicked = Date.now();
  await page.click(button);

  const deadline = clicked + timeoutMs;
  let first = null;
  let last = null;
  const samples = [];
  while (Date.now() < deadline) {
    const s = await page.evaluate((name) => {
      const v = document.getElementById("video");
      const w = window.sluicePage.webrtc;
      const b = document.querySelector(`#streams-body tr[data-stream="${CSS.escape(name)}"] button[data-protocol="webrtc"]`);
      return {
        currentTime: v.currentTime, readyState: v.readyState, videoWidth: v.videoWidth, videoHeight: v.videoHeight,
        hasSrcObject: !!v.srcObject, status: document.getElementById("player-status").textContent,
        title: document.getElementById("player-title").textContent, button: b ? b.textContent : null,
        protocol: document.getElementById("play-protocol").value, url: location.search,
        webrtc: w ? { httpStatus: w.httpStatus, location: w.location, connectionState: w.connectionState, error: w.error } : null,
        errors: window.sluicePage.errors.slice(),
      };
    }, stream);
    s.wall = (Date.now() - clicked) / 1000;
    samples.push([s.wall, s.currentTime, s.readyState]);
    last = s;
    if (!first && s.currentTime > 0) first = s;
    // The status line's "Playing ... over WebRTC" comes from a 1 s timer: wait for it too.
    if (first && s.currentTime - first.currentTime >= 2 && /over WebRTC: \d+x\d+/.test(s.status)) break;
    await sleep(250);
  }
  result.pageLoadS = (clicked - started) / 1000;
  result.firstFrameAfterS = first ? first.wall : null;
  result.advancedS = first ? last.currentTime - first.currentTime : 0;
  result.overWallS = first ? last.wall - first.wall : 0;
  Object.assign(result, { videoWidth: last.videoWidth, videoHeight: last.videoHeight, hasSrcObject: last.hasSrcObject,
    playerTitle: last.title, playingButton: last.button, protocolSelect: last.protocol, pageUrl: last.url,
    webrtc: last.webrtc, appErrors: last.errors });
  result.statuses = (await page.evaluate(() => window.statusTexts)).filter((t, i, a) => i === 0 || t !== a[i - 1]);
  result.samples = samples.slice(-8);

  // Stop: the page DELETEs the session's Location.
  await page.click("#stop");
  await page.waitForFunction(() => window.sluicePage.webrtcDeletes.length > 0, null, { timeout: 10000 });
  result.deleteStatuses = await page.evaluate(() => window.sluicePage.webrtcDeletes.slice());
  result.afterStop = await page.evaluate(() => ({
    status: document.getElementById("player-status").textContent,
    hasSrcObject: !!document.getElementById("video").srcObject, webrtc: window.sluicePage.webrtc }));
  result.requests = requests;
  await page.close();

  // An offer the server refuses (no such app): the page shows the server's reason.
  const absent = await browser.newPage();
  watch(absent, result);
  await absent.goto(`${base}/?stream=noapp/absent&protocol=webrtc`, { waitUntil: "load", timeout: 15000 });
  await absent.waitForFunction(() => /WebRTC failed/.test(document.getElementById("player-status").textContent),
    null, { timeout: 10000 }).catch(() => {});
  result.absentStatus = await absent.evaluate(() => document.getElementById("player-status").textContent);
  result.absentError = await absent.evaluate(() => window.sluicePage.webrtc && window.sluicePage.webrtc.error);
  await absent.close();
  // Chromium logs the 404 of the refused offer as a console error: expected there, not a page fault.
  result.consoleErrors = result.consoleErrors.filter((e) => !/404/.test(e));
}

async function publish(browser, result) {
  const page = await browser.newPage();
  watch(page, result);
  let offer = null;
  page.on("request", (r) => {
    if (r.method() === "POST" && /\/whip$/.test(r.url())) {
      offer = { url: r.url(), authorization: r.headers()["authorization"] || null, contentType: r.headers()["content-type"],
        sdp: r.postData() || "" };
    }
  });
  const t0 = Date.now();
  await page.goto(`${base}/publish.html`, { waitUntil: "load", timeout: 15000 });
  result.secureContext = await page.evaluate(() => window.isSecureContext);
  await page.fill("#name", stream);
  if (key) await page.fill("#key", key);
  await page.click("#start");
  const read = () => page.evaluate(() => Object.assign({}, window.sluicePublish, {
    status: document.getElementById("status").textContent,
    previewWidth: document.getElementById("preview").videoWidth,
    watchHidden: document.getElementById("watch").hidden,
    startDisabled: document.getElementById("start").disabled }));
  const deadline = Date.now() + timeoutMs;
  let s = null;
  const statuses = [];
  while (Date.now() < deadline) {
    s = await read();
    if (!statuses.length || statuses[statuses.length - 1] !== s.status) statuses.push(s.status);
    if (s.connectionState === "failed" || (s.httpStatus && s.httpStatus !== 201) || s.error) break;
    if (s.connectionState === "connected" && s.framesSent > 0 && /^Publishing .*frames sent/.test(s.status)) break;
    await sleep(200);
  }
  result.publishing = s;
  result.statuses = statuses;
  result.connectedAfterS = (Date.now() - t0) / 1000;
  if (offer) {
    const lines = offer.sdp.split(/\r?\n/);
    const video = lines.find((l) => l.startsWith("m=video")) || "";
    const first = video.split(" ")[3];
    const rtpmap = lines.find((l) => l.startsWith(`a=rtpmap:${first} `)) || "";
    offer.firstVideoCodec = rtpmap.replace(/^a=rtpmap:\d+ /, "");
    offer.sendonly = lines.filter((l) => l === "a=sendonly").length;
    delete offer.sdp;
  }
  result.offer = offer;
  print(Object.assign({ phase: "publishing" }, result));

  // Keep publishing until told to stop (a line on stdin) or the time is up.
  await new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin });
    const timer = setTimeout(resolve, timeoutMs);
    rl.once("line", () => {
      clearTimeout(timer);
      resolve();
    });
    rl.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  result.beforeStop = await read();
  await page.click("#stop");
  await page.waitForFunction(() => window.sluicePublish.deletes.length > 0, null, { timeout: 10000 }).catch(() => {});
  result.stopped = await read();
  await page.close();
}

async function main() {
  const result = { pageErrors: [], consoleErrors: [] };
  const browser = await launch();
  try {
    if (mode === "play") await play(browser, result);
    else await publish(browser, result);
  } catch (e) {
    result.fatal = String(e && e.stack ? e.stack : e);
  } finally {
    await browser.close();
  }
  print(Object.assign({ phase: mode === "play" ? "played" : "stopped" }, result));
}

main();

// Drives headless Chromium (Debian's, through playwright-core from the build's web/node_modules)
// against the built-in page's plots, for page_plots_test.py. Prints one JSON object on stdout.
//
//   node page_plots_browser.js BASE_URL STREAM KEYED_STREAM NODE_MODULES CHROMIUM SCREENSHOT THUMBNAIL
//
// Opens BASE_URL/, waits for the server's charts to hold 3 points or more, opens the details of
// STREAM and of KEYED_STREAM (the OBS settings) and waits for STREAM's charts; with THUMBNAIL=1
// waits for STREAM's thumbnail to load. Then reads what each chart plots (uPlot's u.data), the
// OBS fields, the thumbnails, takes a screenshot of the whole page, and reports the errors seen.
"use strict";

const [base, stream, keyed, nodeModules, chromium, screenshot, thumbnailArg] = process.argv.slice(2);
const wantThumbnail = thumbnailArg === "1";
const { launchChromium } = require("./chromium_launch");

async function main() {
  const result = { pageErrors: [], consoleErrors: [], failedRequests: [], steps: [] };
  const browser = await launchChromium(nodeModules, chromium, { autoplay: false, noQuic: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on("pageerror", (e) => result.pageErrors.push(String(e && e.message ? e.message : e)));
    page.on("console", (m) => {
      if (m.type() === "error") result.consoleErrors.push(`${m.text()} ${m.location().url || ""}`);
    });
    page.on("requestfailed", (r) => result.failedRequests.push(`${r.url()} ${r.failure() && r.failure().errorText}`));
    const started = Date.now();
    const step = (what) => result.steps.push([what, (Date.now() - started) / 1000]);
    const response = await page.goto(`${base}/`, { waitUntil: "load", timeout: 15000 });
    result.pageStatus = response ? response.status() : 0;
    result.uplotLoaded = await page.evaluate(() => typeof window.uPlot === "function");

    await page.waitForFunction(() => {
      const p = window.sluicePlots;
      const charts = p ? Object.values(p.charts) : [];
      return charts.length >= 5 && charts.every((c) => c.u.data[0].length >= 3);
    }, null, { timeout: 20000, polling: 250 });
    step("server charts have 3 points");

    for (const name of [stream, keyed]) {
      const button = `#streams-body tr[data-stream="${name}"] button[data-details]`;
      await page.waitForSelector(button, { timeout: 10000 });
      await page.click(button);
    }
    await page.waitForFunction((name) => {
      const s = window.sluicePlots.streams[name];
      return s && Object.values(s.charts).every((c) => c.u.data[0].length >= 2);
    }, stream, { timeout: 15000, polling: 250 });
    step("stream charts have 2 points");
    if (wantThumbnail) {
      await page.waitForFunction((name) => {
        const img = document.querySelector(`img[data-thumbnail="${CSS.escape(name)}"]`);
        return img && img.complete && img.naturalWidth > 0 && !img.hidden;
      }, stream, { timeout: 15000, polling: 250 });
      step("thumbnail loaded");
    }
    // A refresh of the charts in between the reads below would mix two moments: read them at once.
    Object.assign(result, await page.evaluate(([name, keyedName]) => {
      const chart = (c) => ({ id: c.spec.id, columns: c.columns, data: c.u.data.map((a) => Array.from(a)),
        rendered: c.div.querySelector("canvas") !== null && c.div.querySelector("canvas").width > 0 });
      const p = window.sluicePlots;
      const obs = (n) => {
        const row = document.querySelector(`#streams-body tr[data-details="${CSS.escape(n)}"]`);
        if (!row) return null;
        return Object.fromEntries(Array.from(row.querySelectorAll("input[data-obs]"), (i) => [i.dataset.obs, i.value]));
      };
      const thumbnails = Array.from(document.querySelectorAll("img[data-thumbnail]"), (img) => ({
        stream: img.dataset.thumbnail, src: img.getAttribute("src"), hidden: img.hidden, complete: img.complete,
        naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight }));
      return {
        serverCharts: Object.values(p.charts).map(chart),
        streamCharts: Object.values(p.streams[name].charts).map(chart),
        obs: obs(name), keyedObs: obs(keyedName),
        thumbnails, thumbnailCounts: p.thumbnails,
        ingest: p.ingest, plotErrors: p.errors, appErrors: window.sluicePage ? window.sluicePage.errors : ["no sluicePage"],
        pageText: document.body.innerText,
      };
    }, [stream, keyed]));
    await page.screenshot({ path: screenshot, fullPage: true });
    step("screenshot");
    await page.close();
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

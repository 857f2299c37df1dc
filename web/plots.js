// The page's plots and each stream's details, beside app.js: the server's last minutes (GET
// api/v1/history: bitrate in and out, players, loop lag, CPU, memory) drawn with uPlot and
// refreshed every 2 s; for a stream whose details are open, its own (api/v1/history?stream=...:
// ingest, players, frames per second) and the settings to publish it from OBS (api/v1/ingest:
// the RTMP port, whether its app needs a key; never the key). A live stream's thumbnail is its
// APP/STREAM/snapshot.jpg, asked for only when the server serves snapshots and the stream has a
// keyframe in its GOP cache (a refused request is an error in the browser's console), renewed every
// 10 s.
// window.sluicePlots holds what the plots show, for tests: each chart's uPlot (data in u.data)
// and the columns of the history each series comes from.
"use strict";

(function () {
  const REFRESH_MS = 2000;
  const THUMBNAIL_MS = 10000;
  const COLORS = ["#1f6feb", "#e8590c", "#2f9e44", "#ae3ec9"];
  // Each chart: its series as [history column, label, factor from the API's unit to the shown one].
  const SERVER_CHARTS = [
    { id: "bitrate", title: "Bitrate, kbit/s", series: [["bytes_in_per_s", "in", 8 / 1000], ["bytes_out_per_s", "out", 8 / 1000]] },
    { id: "players", title: "Players", series: [["players", "players", 1], ["hls_viewers", "HLS viewers", 1]] },
    { id: "lag", title: "Loop lag, ms (last minute)", series: [["loop_lag_p99_s", "p99", 1000], ["loop_lag_max_s", "max", 1000]] },
    { id: "cpu", title: "CPU, % of a core", series: [["cpu_cores", "CPU", 100]] },
    { id: "memory", title: "Memory, MiB", series: [["rss_bytes", "resident", 1 / 1048576]] },
  ];
  const STREAM_CHARTS = [
    { id: "ingest", title: "Ingest, kbit/s", series: [["ingest_kbps", "ingest", 1]] },
    { id: "players", title: "Players", series: [["players", "players", 1]] },
    { id: "fps", title: "Frames per second", series: [["fps", "fps", 1]] },
  ];

  const state = { server: null, charts: {}, streams: {}, ingest: null, thumbnails: {}, errors: [] };
  window.sluicePlots = state;
  const open = new Map();        // stream name -> { row, charts, obs }: the details shown
  const thumbnails = new Map();  // stream name -> <img>

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

  async function getJson(path) {
    try {
      const r = await fetch(path, { cache: "no-store", headers: { Accept: "application/json" } });
      return r.ok ? { status: r.status, body: await r.json() } : { status: r.status };
    } catch (e) {
      return { status: 0 };
    }
  }

  // ---- charts ----

  function chartWidth(div) {
    return Math.max(200, Math.floor(div.clientWidth || 300));
  }

  function makeChart(container, spec, key) {
    const div = el("div", { class: "plot", "data-plot": spec.id });
    container.append(div);
    const muted = getComputedStyle(document.documentElement).getPropertyValue("--muted").trim() || "#667085";
    const axis = { stroke: muted, grid: { stroke: "rgba(128,128,128,0.15)" }, ticks: { stroke: "rgba(128,128,128,0.3)" } };
    const opts = {
      title: spec.title, width: chartWidth(div), height: 150,
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.15 : 1] } },
      series: [{}, ...spec.series.map(([, label], i) => ({ label, stroke: COLORS[i], width: 1.5, points: { show: false } }))],
      axes: [axis, Object.assign({ size: 56 }, axis)],
      cursor: { drag: { x: false, y: false } },
    };
    const chart = { spec, key, u: new uPlot(opts, [[], ...spec.series.map(() => [])], div), div,
      columns: spec.series.map(([c, , f]) => ({ column: c, factor: f })) };
    return chart;
  }

  function chartData(spec, h) {
    return [h.t, ...spec.series.map(([column, , f]) => (h.series[column] || []).map((v) => (v === null ? null : v * f)))];
  }

  function draw(charts, h) {
    for (const c of charts) c.u.setData(chartData(c.spec, h));
  }

  function resize() {
    const all = [...Object.values(state.charts)];
    for (const d of open.values()) all.push(...d.charts);
    for (const c of all) c.u.setSize({ width: chartWidth(c.div), height: 150 });
  }

  // ---- a stream's details: its plots and the OBS settings ----

  function appOf(name) {
    return name.slice(0, name.indexOf("/"));
  }

  function appInfo(name) {
    const apps = (state.ingest && state.ingest.apps) || [];
    return apps.find((a) => a.name === appOf(name)) || null;
  }

  async function copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      // Not a secure context (plain http to another host): the field is selected for Ctrl+C.
      button.previousSibling.select();
    }
    button.textContent = "Copied";
    setTimeout(() => (button.textContent = "Copy"), 1500);
  }

  function field(label, value, id) {
    const input = el("input", { readOnly: true, value, spellcheck: false, "data-obs": id });
    const button = el("button", { type: "button", class: "secondary", textContent: "Copy", "data-copy": id });
    button.addEventListener("click", () => copy(input.value, button));
    return el("div", { class: "obs-field" }, el("label", {}, label), input, button);
  }

  // OBS: Settings, Stream, Service "Custom...": the server is rtmp://HOST[:PORT]/APP, the key the
  // stream's name (with ?key=... when its app asks for one: a placeholder, the key is not shown).
  function obsSettings(name) {
    const app = appInfo(name);
    const ports = (state.ingest && state.ingest.rtmp_ports) || [];
    const port = ports.find((p) => p > 0) || 1935;
    const server = `rtmp://${location.hostname}${port === 1935 ? "" : ":" + port}/${appOf(name)}`;
    let key = name.slice(name.indexOf("/") + 1);
    const credential = app ? app.publish_credential : "none";
    if (credential === "key") key += "?key=YOUR_PUBLISH_KEY";
    if (credential === "signed") key += "?expires=UNIX_TIME&sign=SIGNATURE";
    const box = el("div", { class: "obs" }, el("h3", {}, "Publish from OBS"), field("Server", server, "server"),
      field("Stream key", key, "key"));
    if (credential !== "none") {
      box.append(el("p", { class: "muted" }, credential === "key" ? "Put one of the app's publish keys in place of YOUR_PUBLISH_KEY."
        : "Sign the name as docs/security.md shows (sluice sign)."));
    }
    return box;
  }

  function detailsRow(name, columns) {
    let d = open.get(name);
    if (!d) {
      const plots = el("div", { class: "plots" });
      const cell = el("td", { colSpan: columns }, el("div", { class: "details" }, plots));
      d = { row: el("tr", { class: "details-row", "data-details": name }, cell), charts: [], plots, obs: null };
      open.set(name, d);
      // The row is in the page once app.js placed it; the charts take their width from it.
      requestAnimationFrame(() => {
        if (d.charts.length === 0 && open.get(name) === d) {
          d.charts = STREAM_CHARTS.map((spec) => makeChart(plots, spec, name));
          refreshStream(name);
        }
      });
    }
    if (!d.obs && state.ingest) {
      d.obs = obsSettings(name);
      d.row.firstChild.firstChild.prepend(d.obs);
    }
    d.row.firstChild.colSpan = columns;
    return d.row;
  }

  async function refreshStream(name) {
    const d = open.get(name);
    if (!d || d.charts.length === 0) return;
    const r = await getJson("api/v1/history?stream=" + encodeURIComponent(name));
    if (!r.body) return;  // not tracked (yet): the charts stay as they are
    state.streams[name] = { history: r.body, charts: Object.fromEntries(d.charts.map((c) => [c.spec.id, c])) };
    draw(d.charts, r.body);
  }

  function toggle(name) {
    const d = open.get(name);
    if (d) {
      for (const c of d.charts) c.u.destroy();
      open.delete(name);
      delete state.streams[name];
      return false;
    }
    detailsRow(name, 1);  // app.js places it, with its width, at once
    return true;
  }

  // ---- thumbnails ----

  function snapshotUrl(name, stamp) {
    const slash = name.indexOf("/");
    return encodeURIComponent(name.slice(0, slash)) + "/" + encodeURIComponent(name.slice(slash + 1)) +
      "/snapshot.jpg?width=320&t=" + stamp;
  }

  // Whether the server can make one now without refusing (404, 503, 403, 415: console errors): it
  // decodes the keyframe that starts the GOP cache.
  function snapshotPossible(s) {
    const app = appInfo(s.name);
    return !!(state.ingest && state.ingest.snapshots && app && app.play_credential === "none" && s.live &&
      s.video && (s.video.codec === "H264" || s.video.codec === "HEVC") && s.gop_cache && s.gop_cache.frames > 0);
  }

  function thumbnail(s) {
    let img = thumbnails.get(s.name);
    if (!snapshotPossible(s)) {
      if (img) img.hidden = true;
      return img || null;
    }
    const stamp = Math.floor(Date.now() / THUMBNAIL_MS);
    if (!img) {
      img = el("img", { class: "thumbnail", alt: "", width: 160, hidden: true, "data-thumbnail": s.name });
      const t = (state.thumbnails[s.name] = { loaded: 0, failed: 0 });
      img.addEventListener("load", () => {
        t.loaded++;
        img.dataset.pending = "";
        img.hidden = false;
      });
      img.addEventListener("error", () => {
        t.failed++;
        img.dataset.pending = "";
        img.hidden = true;
      });
      thumbnails.set(s.name, img);
    }
    // A new src while one is still loading would abort it (a slow server would never show one):
    // the next stamp waits for the last answer.
    if (img.dataset.stamp !== String(stamp) && !img.dataset.pending) {
      img.dataset.stamp = String(stamp);
      img.dataset.pending = "1";
      img.src = snapshotUrl(s.name, stamp);
    }
    return img;
  }

  // Streams no longer listed lose their thumbnail and details.
  function prune(names) {
    const keep = new Set(names);
    for (const name of [...thumbnails.keys()]) {
      if (!keep.has(name)) thumbnails.delete(name);
    }
    for (const name of [...open.keys()]) {
      if (!keep.has(name)) toggle(name);
    }
  }

  // ---- the server's plots ----

  let timer = null;
  async function refresh() {
    clearTimeout(timer);
    if (!state.ingest) {
      const i = await getJson("api/v1/ingest");
      if (i.body) state.ingest = i.body;
    }
    const r = await getJson("api/v1/history");
    const section = document.getElementById("plots");
    if (r.body) {
      section.hidden = false;
      if (Object.keys(state.charts).length === 0) {
        const grid = document.getElementById("plots-grid");
        for (const spec of SERVER_CHARTS) state.charts[spec.id] = makeChart(grid, spec, null);
      }
      state.server = r.body;
      draw(Object.values(state.charts), r.body);
    } else {
      section.hidden = true;  // the API refused (its section says why) or this server keeps no history
    }
    await Promise.all([...open.keys()].map(refreshStream));
    timer = setTimeout(refresh, REFRESH_MS);
  }

  window.SluicePlots = { detailsRow, isOpen: (name) => open.has(name), toggle, thumbnail, prune };
  window.addEventListener("resize", resize);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });
  if (window.uPlot) refresh();
  else state.errors.push("uPlot did not load");
})();

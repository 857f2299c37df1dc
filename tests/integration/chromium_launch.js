// Headless Chromium (Debian's, through playwright-core from the build's web/node_modules) with the
// flags every browser test of the suite starts it with; what differs between the tests is asked
// for by name:
//   autoplay   media may play without a click (default: true)
//   noQuic     no QUIC (the HTTP pages' requests stay on the TCP connections the test watches)
//   webrtc     host candidates as addresses, not mDNS names: the server is on this machine
//   fakeMedia  a test pattern and a beep instead of a camera and a microphone, without a prompt
"use strict";

const path = require("path");

const COMMON_FLAGS = [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
  "--mute-audio", "--no-first-run", "--disable-component-update", "--disable-sync",
];

function launchChromium(nodeModules, executablePath, { autoplay = true, noQuic = false, webrtc = false,
  fakeMedia = false } = {}) {
  const { chromium } = require(path.join(nodeModules, "playwright-core"));
  const args = [...COMMON_FLAGS];
  if (autoplay) args.push("--autoplay-policy=no-user-gesture-required");
  if (noQuic) args.push("--disable-quic");
  if (webrtc) args.push("--disable-features=WebRtcHideLocalIpsWithMdns");
  if (fakeMedia) args.push("--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream");
  // headless: false, since the flags ask for the new headless mode themselves.
  return chromium.launch({ executablePath, headless: false, args, timeout: 20000 });
}

module.exports = { launchChromium };

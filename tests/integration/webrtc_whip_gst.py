#!/usr/bin/python3
"""A WHIP publisher made of GStreamer's webrtcbin, for webrtc_whip_test.py:

  webrtc_whip_gst.py URL SECONDS [BEARER [KEYINT]]

videotestsrc (320x240, 25 fps, the moving ball pattern) through x264enc
(constrained baseline, no B-frames, a keyframe every KEYINT frames: 25 unless given; the encoder
also makes one when the server sends a PLI) and audiotestsrc (a 440 Hz sine)
through opusenc, both into webrtcbin (sendonly, max-bundle); the offer, once ICE gathering is
complete, is POSTed to URL (application/sdp, `Authorization: Bearer` when given), the answer set;
publishes for SECONDS, then DELETEs the resource. Prints JSON lines: {"status": ..., "location":
...} after the POST, {"ice": state} on changes, {"done": true, "sent": {...}} at the end."""
import json
import os
import sys
import urllib.error
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

url, seconds = sys.argv[1], float(sys.argv[2])
bearer = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
keyint = int(sys.argv[4]) if len(sys.argv) > 4 else 25
Gst.init(None)
PIPELINE = (
    "webrtcbin name=w bundle-policy=max-bundle "
    "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,framerate=25/1 ! "
    f"videoconvert ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max={keyint} bframes=0 ! "
    "video/x-h264,profile=constrained-baseline ! rtph264pay config-interval=-1 pt=96 ! "
    "application/x-rtp,media=video,encoding-name=H264,payload=96 ! w. "
    "audiotestsrc is-live=true wave=sine freq=440 ! audioconvert ! audioresample ! opusenc ! "
    "rtpopuspay pt=111 ! application/x-rtp,media=audio,encoding-name=OPUS,payload=111 ! w.")
pipe = Gst.parse_launch(PIPELINE)
w = pipe.get_by_name("w")
loop = GLib.MainLoop()
state = {"location": None}


def say(**kw):
    try:
        print(json.dumps(kw), flush=True)
    except BrokenPipeError:
        os._exit(0)  # the test that reads this has gone: nobody would ever stop this process


def post_offer():
    offer = w.get_property("local-description").sdp.as_text()
    say(candidates=[line for line in offer.splitlines() if "candidate" in line])
    headers = {"Content-Type": "application/sdp"}
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    req = urllib.request.Request(url, data=offer.encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, body, location = r.status, r.read().decode(), r.headers.get("Location")
    except urllib.error.HTTPError as e:
        say(status=e.code, body=e.read().decode()[:300])
        loop.quit()
        return
    state["location"] = location
    say(status=status, location=location)
    _, sdp = GstSdp.SDPMessage.new_from_text(body)
    answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, sdp)
    w.emit("set-remote-description", answer, Gst.Promise.new())


def on_gathering(element, _pspec):
    say(gathering=int(element.get_property("ice-gathering-state")))
    if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
        if state.get("posted") is None:
            state["posted"] = True
            GLib.idle_add(lambda: post_offer() and False)


def on_offer(promise, _data):
    reply = promise.get_reply()
    offer = reply.get_value("offer")
    w.emit("set-local-description", offer, Gst.Promise.new())


def on_negotiation_needed(element):
    for i in range(2):
        t = element.emit("get-transceiver", i)
        if t is not None:
            t.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
    element.emit("create-offer", None, Gst.Promise.new_with_change_func(on_offer, None))


def on_ice_state(element, _pspec):
    say(ice=int(element.get_property("ice-connection-state")))


def finish():
    if state["location"]:
        base = url.split("/", 3)
        try:
            urllib.request.urlopen(urllib.request.Request(f"{base[0]}//{base[2]}{state['location']}", method="DELETE"),
                                   timeout=5)
        except urllib.error.URLError:
            pass
    say(done=True)
    loop.quit()
    return False


w.connect("on-negotiation-needed", on_negotiation_needed)
w.connect("notify::ice-gathering-state", on_gathering)
w.connect("notify::ice-connection-state", on_ice_state)
pipe.set_state(Gst.State.PLAYING)
GLib.timeout_add(int(seconds * 1000), finish)
loop.run()
pipe.set_state(Gst.State.NULL)

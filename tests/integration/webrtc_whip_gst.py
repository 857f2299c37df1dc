#!/usr/bin/python3
"""A WHIP publisher made of GStreamer's webrtcbin, for webrtc_whip_test.py and webrtc_keyframe_test.py:

  webrtc_whip_gst.py URL SECONDS [BEARER [KEYINT]]

videotestsrc (320x240, 25 fps, the moving ball pattern) through x264enc
(constrained baseline, no B-frames, a keyframe every KEYINT frames: 25 unless given; the encoder
also makes one when the server sends a PLI) and audiotestsrc (a 440 Hz sine) through opusenc, both
into webrtcbin (sendonly, max-bundle); the WHIP exchange is webrtc_gst_signalling.py's (BEARER,
when not empty, as `Authorization: Bearer`); publishes for SECONDS, then DELETEs the resource.
Prints JSON lines: {"status": ..., "location": ...} after the POST, {"ice": state} on changes,
{"done": true} at the end."""
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
from gi.repository import GLib, Gst, GstWebRTC  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webrtc_gst_signalling import Signalling, say  # noqa: E402

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
signalling = Signalling(w, url, loop, bearer)


def on_negotiation_needed(element):
    for i in range(2):
        t = element.emit("get-transceiver", i)
        if t is not None:
            t.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
    signalling.create_offer()


w.connect("on-negotiation-needed", on_negotiation_needed)
w.connect("notify::ice-connection-state", lambda e, _p: say(ice=int(e.get_property("ice-connection-state"))))
pipe.set_state(Gst.State.PLAYING)
GLib.timeout_add(int(seconds * 1000), signalling.finish)
loop.run()
pipe.set_state(Gst.State.NULL)

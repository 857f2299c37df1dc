#!/usr/bin/python3
"""A WHEP player made of GStreamer's webrtcbin, for webrtc_keyframe_test.py:

  webrtc_whep_gst.py URL SECONDS ASK_AFTER

Two recvonly transceivers (H.264 with `nack pli`, Opus) into webrtcbin (max-bundle); the WHEP
exchange is webrtc_gst_signalling.py's. The video is depayloaded (rtph264depay marks the pictures
that are not IDRs as delta units) into a fakesink. ASK_AFTER seconds after each keyframe but the
first arrives (0: never) the player asks for one: an upstream force-key-unit event, which
webrtcbin's RTP session sends as an RTCP PLI. Plays for SECONDS, then DELETEs the resource. Prints
JSON lines: {"status": ..., "location": ...} after the POST, {"keyframe": t} for each keyframe
and {"asked": t} for each request (t: seconds since the POST, time.monotonic), {"done": true} at
the end."""
import os
import sys
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import GLib, Gst, GstVideo, GstWebRTC  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webrtc_gst_signalling import Signalling, say  # noqa: E402

url, seconds, ask_after = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
Gst.init(None)
pipe = Gst.Pipeline.new("whep")
w = Gst.ElementFactory.make("webrtcbin", "w")
w.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
pipe.add(w)
loop = GLib.MainLoop()
state = {"t0": None, "depay": None, "asking": False, "keyframes": 0}
signalling = Signalling(w, url, loop, on_posted=lambda: state.update(t0=time.monotonic()))
VIDEO = "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,packetization-mode=(string)1," \
        "profile-level-id=(string)42e01f,rtcp-fb-nack-pli=(boolean)true,rtcp-fb-nack=(boolean)true"
# RFC 7587: opus/48000/2 whatever the channels (Sluice refuses an Opus offer without the /2).
AUDIO = "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000,encoding-params=(string)2"


def now():
    return time.monotonic() - state["t0"] if state["t0"] else 0.0


def ask():
    """A keyframe request: the upstream event webrtcbin's RTP session turns into a PLI."""
    state["asking"] = False
    event = GstVideo.video_event_new_upstream_force_key_unit(Gst.CLOCK_TIME_NONE, True, 0)
    state["depay"].get_static_pad("sink").push_event(event)
    say(asked=round(now(), 3))
    return False


def on_video_buffer(_pad, info):
    if not info.get_buffer().has_flags(Gst.BufferFlags.DELTA_UNIT):
        say(keyframe=round(now(), 3))
        state["keyframes"] += 1
        # Not after the first: the join's, from the GOP cache, may be old.
        if ask_after > 0 and not state["asking"] and state["keyframes"] > 1:
            state["asking"] = True
            GLib.timeout_add(int(ask_after * 1000), ask)
    return Gst.PadProbeReturn.OK


def on_pad_added(_element, pad):
    if pad.direction != Gst.PadDirection.SRC:
        return
    caps = pad.get_current_caps() or pad.query_caps(None)
    media = caps.get_structure(0).get_string("media") if caps and caps.get_size() else None
    if media == "video":
        bin_ = Gst.parse_bin_from_description("rtph264depay name=depay ! fakesink sync=false", True)
        state["depay"] = bin_.get_by_name("depay")
        state["depay"].get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_video_buffer)
    else:
        bin_ = Gst.parse_bin_from_description("fakesink sync=false", True)
    pipe.add(bin_)
    bin_.sync_state_with_parent()
    pad.link(bin_.get_static_pad("sink"))


w.connect("pad-added", on_pad_added)
pipe.set_state(Gst.State.PLAYING)  # first: webrtcbin makes no offer before
for caps in (VIDEO, AUDIO):
    w.emit("add-transceiver", GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY, Gst.Caps.from_string(caps))
# Both transceivers, then the offer (on-negotiation-needed may come between the two).
signalling.create_offer()
GLib.timeout_add(int(seconds * 1000), signalling.finish)
loop.run()
pipe.set_state(Gst.State.NULL)

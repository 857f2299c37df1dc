"""The WHIP/WHEP exchange of a GStreamer webrtcbin, shared by webrtc_whip_gst.py (a publisher) and
webrtc_whep_gst.py (a player): once ICE gathering is complete, the offer is POSTed to the URL
(application/sdp, `Authorization: Bearer` when given), the answer set; finish() DELETEs the
resource. Progress goes to stdout as JSON lines (say)."""
import json
import os
import urllib.error
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402


def say(**kw):
    try:
        print(json.dumps(kw), flush=True)
    except BrokenPipeError:
        os._exit(0)  # the test that reads this has gone: nobody would ever stop this process


class Signalling:
    """Drives webrtcbin `w` through the exchange with `url`. on_posted(), when given, runs once
    the answer came (before it is set)."""

    def __init__(self, w, url, loop, bearer=None, on_posted=None):
        self.w, self.url, self.loop, self.bearer, self.on_posted = w, url, loop, bearer, on_posted
        self.location = None
        self.posted = False
        w.connect("notify::ice-gathering-state", self._on_gathering)

    def create_offer(self):
        self.w.emit("create-offer", None, Gst.Promise.new_with_change_func(self._on_offer, None))

    def _on_offer(self, promise, _data):
        reply = promise.get_reply()  # kept: the offer lives in it
        self.w.emit("set-local-description", reply.get_value("offer"), Gst.Promise.new())

    def _on_gathering(self, element, _pspec):
        if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE and not self.posted:
            self.posted = True
            GLib.idle_add(lambda: self._post() and False)

    def _post(self):
        offer = self.w.get_property("local-description").sdp.as_text()
        headers = {"Content-Type": "application/sdp"}
        if self.bearer:
            headers["Authorization"] = "Bearer " + self.bearer
        req = urllib.request.Request(self.url, data=offer.encode(), headers=headers, method="POST")
        if self.on_posted:
            self.on_posted()
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, body, self.location = r.status, r.read().decode(), r.headers.get("Location")
        except urllib.error.HTTPError as e:
            say(status=e.code, body=e.read().decode()[:300])
            self.loop.quit()
            return
        say(status=status, location=self.location,
            offer_candidates=[line for line in offer.splitlines() if "candidate" in line],
            answer_candidates=[line for line in body.splitlines() if "candidate" in line])
        _, sdp = GstSdp.SDPMessage.new_from_text(body)
        answer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, sdp)
        self.w.emit("set-remote-description", answer, Gst.Promise.new_with_change_func(self._on_answer_set, body))

    def _on_answer_set(self, promise, body):
        reply = promise.get_reply()
        if reply is not None and reply.has_field("error"):
            say(answer_error=str(reply.get_value("error")), answer=body)

    def finish(self):
        """DELETEs the resource (when there is one), then ends the main loop."""
        if self.location:
            base = self.url.split("/", 3)
            try:
                urllib.request.urlopen(urllib.request.Request(f"{base[0]}//{base[2]}{self.location}", method="DELETE"),
                                       timeout=5)
            except urllib.error.URLError:
                pass
        say(done=True)
        self.loop.quit()
        return False

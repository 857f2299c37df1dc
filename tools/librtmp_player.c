/* librtmp-player: a test player built on librtmp (the library behind rtmpdump and GStreamer's
 * rtmpsrc), an implementation independent of ours. It plays one URL, optionally pauses and
 * unpauses at given times, and prints one line per event:
 *   status +MS CODE                 (NetStream.* codes found in onStatus / onPlayStatus)
 *   audio|video +MS ts=T size=N
 *   end reason=...
 * Usage: librtmp-player URL SECONDS [PAUSE_AT RESUME_AT] */
#include <librtmp/log.h>
#include <librtmp/rtmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Prints every "NetStream.*" code in a command or data message body. */
static void print_codes(const char* body, unsigned size, long rel) {
  const char* p = body;
  const char* end = body + size;
  while (p < end) {
    const char* hit = memmem(p, (size_t)(end - p), "NetStream.", 10);
    if (!hit) break;
    const char* q = hit;
    while (q<end&& * q> 0x20 && *q < 0x7F) q++;
    printf("status +%ld %.*s\n", rel, (int)(q - hit), hit);
    p = q;
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: librtmp-player URL SECONDS [PAUSE_AT RESUME_AT]\n");
    return 2;
  }
  double seconds = atof(argv[2]);
  double pause_at = argc > 4 ? atof(argv[3]) : -1;
  double resume_at = argc > 4 ? atof(argv[4]) : -1;
  RTMP_LogSetLevel(RTMP_LOGCRIT);
  RTMP* r = RTMP_Alloc();
  RTMP_Init(r);
  if (!RTMP_SetupURL(r, argv[1])) {
    printf("end reason=bad-url\n");
    return 1;
  }
  RTMP_SetBufferMS(r, 3000);
  if (!RTMP_Connect(r, NULL) || !RTMP_ConnectStream(r, 0)) {
    printf("end reason=connect-failed\n");
    return 1;
  }
  double t0 = now_ms();
  int paused = 0, resumed = 0;
  const char* reason = "duration";
  RTMPPacket packet = {0};
  for (;;) {
    double elapsed = (now_ms() - t0) / 1000.0;
    if (elapsed >= seconds) break;
    if (pause_at >= 0 && !paused && elapsed >= pause_at) {
      paused = 1;
      RTMP_SendPause(r, 1, r->m_mediaStamp);
      printf("cmd +%ld pause\n", (long)(now_ms() - t0));
    }
    if (paused && !resumed && elapsed >= resume_at) {
      resumed = 1;
      RTMP_SendPause(r, 0, r->m_mediaStamp);
      printf("cmd +%ld unpause\n", (long)(now_ms() - t0));
    }
    /* Wait for data at most 50 ms so the pause/resume times are kept. */
    if (r->m_sb.sb_size == 0) {
      fd_set fds;
      struct timeval tv = {0, 50000};
      FD_ZERO(&fds);
      FD_SET(RTMP_Socket(r), &fds);
      if (select(RTMP_Socket(r) + 1, &fds, NULL, NULL, &tv) <= 0) continue;
    }
    if (!RTMP_ReadPacket(r, &packet)) {
      reason = "server-closed";
      break;
    }
    if (!RTMPPacket_IsReady(&packet)) continue;
    long rel = (long)(now_ms() - t0);
    if (packet.m_packetType == RTMP_PACKET_TYPE_AUDIO || packet.m_packetType == RTMP_PACKET_TYPE_VIDEO) {
      printf("%s +%ld ts=%u size=%u\n", packet.m_packetType == RTMP_PACKET_TYPE_AUDIO ? "audio" : "video", rel,
             packet.m_nTimeStamp, packet.m_nBodySize);
    } else if (packet.m_packetType == RTMP_PACKET_TYPE_INVOKE || packet.m_packetType == RTMP_PACKET_TYPE_INFO) {
      print_codes(packet.m_body, packet.m_nBodySize, rel);
    }
    RTMP_ClientPacket(r, &packet);
    RTMPPacket_Free(&packet);
    fflush(stdout);
  }
  printf("end reason=%s\n", reason);
  RTMP_Close(r);
  RTMP_Free(r);
  return 0;
}

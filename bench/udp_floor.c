/*
 * The UDP floor: what the kernel charges a sender for WebRTC-sized datagrams to N loopback
 * sockets, by the way they are handed over (bench/webrtc.sh, docs/benchmarks.md "WebRTC: 200 WHEP
 * players"):
 *
 *   sendmsg   one sendmsg() per datagram, as Sluice's server/webrtc/udp_port does (libuv's
 *             uv_udp_try_send);
 *   sendmmsg  the same datagrams in sendmmsg() batches of up to -b (64), across players;
 *   gso       UDP GSO: one sendmsg() per player and frame with a UDP_SEGMENT control message, the
 *             kernel cuts it into datagrams (at most 50 segments a call).
 *
 * The program makes N receiving sockets on 127.0.0.1, then forks. The child is the reader: it
 * drains them with epoll and recvmmsg and counts what arrived (a GSO send arrives as separate
 * datagrams). The parent is the writer: every 40 ms (a 25 fps frame) each player is owed RATE
 * kbit/s of SIZE-byte datagrams, sent from one unconnected socket to the players in turn, like a
 * server's frame to all of its players. After SECONDS it reports its own CPU time (getrusage, user +
 * system; on loopback that includes the receive path the kernel runs in the sender's context, as it
 * does for a server) per datagram and per GB, and the reader's count.
 *
 * Build: cc -O2 -o udp_floor bench/udp_floor.c
 * Usage: udp_floor -n N [-d SECONDS] [-r KBIT_PER_PLAYER] [-s SIZE] [-m sendmsg|sendmmsg|gso] [-b BATCH]
 * Output: one line of key=value pairs on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

enum { MAX_BATCH = 1024, MAX_GSO_SEGMENTS = 50 };

static volatile sig_atomic_t g_stop;
static void on_term(int sig) {
  (void)sig;
  g_stop = 1;
}

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void die(const char* what) {
  perror(what);
  exit(2);
}

/* The reader: counts datagrams and bytes until SIGTERM, then writes them to `out`. */
static void reader(const int* fds, int n, int out) {
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  for (int i = 0; i < n; ++i) {
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0) die("epoll_ctl");
  }
  enum { VLEN = 32, BUF = 2048 };
  static char bufs[VLEN][BUF];
  struct iovec iov[VLEN];
  struct mmsghdr msgs[VLEN];
  for (int i = 0; i < VLEN; ++i) {
    iov[i].iov_base = bufs[i];
    iov[i].iov_len = BUF;
  }
  uint64_t datagrams = 0, bytes = 0;
  struct epoll_event events[256];
  while (!g_stop) {
    int k = epoll_wait(ep, events, 256, 100);
    for (int e = 0; e < k; ++e) {
      int fd = fds[events[e].data.u32];
      for (;;) {
        memset(msgs, 0, sizeof msgs);
        for (int i = 0; i < VLEN; ++i) {
          msgs[i].msg_hdr.msg_iov = &iov[i];
          msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int got = recvmmsg(fd, msgs, VLEN, MSG_DONTWAIT, NULL);
        if (got <= 0) break;
        datagrams += (uint64_t)got;
        for (int i = 0; i < got; ++i) bytes += msgs[i].msg_len;
        if (got < VLEN) break;
      }
    }
  }
  uint64_t result[2] = {datagrams, bytes};
  if (write(out, result, sizeof result) != (ssize_t)sizeof result) die("write");
  exit(0);
}

int main(int argc, char** argv) {
  int n = 200, seconds = 20, kbit = 2600, size = 1200, batch = 64;
  const char* mode = "sendmsg";
  for (int opt; (opt = getopt(argc, argv, "n:d:r:s:m:b:")) != -1;) {
    switch (opt) {
      case 'n': n = atoi(optarg); break;
      case 'd': seconds = atoi(optarg); break;
      case 'r': kbit = atoi(optarg); break;
      case 's': size = atoi(optarg); break;
      case 'm': mode = optarg; break;
      case 'b': batch = atoi(optarg); break;
      default:
        fprintf(stderr, "usage: udp_floor -n N [-d S] [-r KBIT] [-s SIZE] [-m sendmsg|sendmmsg|gso] [-b BATCH]\n");
        return 2;
    }
  }
  const int gso = strcmp(mode, "gso") == 0, mmsg = strcmp(mode, "sendmmsg") == 0;
  if (n < 1 || seconds < 1 || size < 64 || size > 1472 || batch < 1 || batch > MAX_BATCH ||
      (!gso && !mmsg && strcmp(mode, "sendmsg") != 0)) {
    fprintf(stderr, "udp_floor: bad arguments\n");
    return 2;
  }
  /* Datagrams per player and frame: RATE kbit/s at 25 frames a second. */
  const int rounded = (int)((double)kbit * 1000 / 8 / 25 / size + 0.5);
  const int per_frame = rounded > 0 ? rounded : 1;

  int* fds = calloc((size_t)n, sizeof(int));
  struct sockaddr_in* addrs = calloc((size_t)n, sizeof(struct sockaddr_in));
  if (!fds || !addrs) die("calloc");
  for (int i = 0; i < n; ++i) {
    fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
    if (fds[i] < 0) die("socket");
    int rcv = 1 << 20;
    setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fds[i], (struct sockaddr*)&a, sizeof a) != 0) die("bind");
    socklen_t len = sizeof addrs[i];
    getsockname(fds[i], (struct sockaddr*)&addrs[i], &len);
  }
  int pipefd[2];
  if (pipe(pipefd) != 0) die("pipe");
  signal(SIGTERM, on_term);
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(pipefd[0]);
    reader(fds, n, pipefd[1]);
  }
  close(pipefd[1]);
  for (int i = 0; i < n; ++i) close(fds[i]);

  int tx = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (tx < 0) die("socket");
  int snd = 4 << 20;
  setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd);
  static char payload[MAX_GSO_SEGMENTS * 1472];
  memset(payload, 0xA5, sizeof payload);
  payload[0] = (char)0x80; /* an RTP version byte, for the look of it */

  static struct mmsghdr msgs[MAX_BATCH];
  static struct iovec iovs[MAX_BATCH];
  char control[CMSG_SPACE(sizeof(uint16_t))];
  uint64_t sent = 0, dropped = 0, calls = 0;
  struct timespec next;
  const long frames = (long)seconds * 25;
  sleep(1); /* the reader is waiting */
  clock_gettime(CLOCK_MONOTONIC, &next);
  const double cpu0 = cpu_seconds();
  for (long f = 0; f < frames; ++f) {
    int queued = 0;
    for (int p = 0; p < n; ++p) {
      if (gso) {
        for (int left = per_frame; left > 0;) {
          const int segs = left < MAX_GSO_SEGMENTS ? left : MAX_GSO_SEGMENTS;
          struct iovec iov = {.iov_base = payload, .iov_len = (size_t)segs * (size_t)size};
          struct msghdr m = {.msg_name = &addrs[p], .msg_namelen = sizeof addrs[p], .msg_iov = &iov, .msg_iovlen = 1};
          if (segs > 1) {
            m.msg_control = control;
            m.msg_controllen = sizeof control;
            struct cmsghdr* c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t seg = (uint16_t)size;
            memcpy(CMSG_DATA(c), &seg, sizeof seg);
          }
          ++calls;
          if (sendmsg(tx, &m, 0) < 0) {
            if (errno != EAGAIN && errno != ENOBUFS) die("sendmsg (gso)");
            dropped += (uint64_t)segs;
          } else {
            sent += (uint64_t)segs;
          }
          left -= segs;
        }
        continue;
      }
      for (int k = 0; k < per_frame; ++k) {
        if (!mmsg) {
          struct iovec iov = {.iov_base = payload, .iov_len = (size_t)size};
          struct msghdr m = {.msg_name = &addrs[p], .msg_namelen = sizeof addrs[p], .msg_iov = &iov, .msg_iovlen = 1};
          ++calls;
          if (sendmsg(tx, &m, 0) < 0) {
            if (errno != EAGAIN && errno != ENOBUFS) die("sendmsg");
            ++dropped;
          } else {
            ++sent;
          }
          continue;
        }
        iovs[queued] = (struct iovec){.iov_base = payload, .iov_len = (size_t)size};
        msgs[queued].msg_hdr = (struct msghdr){
            .msg_name = &addrs[p], .msg_namelen = sizeof addrs[p], .msg_iov = &iovs[queued], .msg_iovlen = 1};
        if (++queued == batch || (p == n - 1 && k == per_frame - 1)) {
          for (int off = 0; off < queued;) {
            ++calls;
            int r = sendmmsg(tx, msgs + off, (unsigned)(queued - off), 0);
            if (r < 0) {
              if (errno != EAGAIN && errno != ENOBUFS) die("sendmmsg");
              dropped += (uint64_t)(queued - off); /* the rest of the batch waits for nobody */
              break;
            }
            sent += (uint64_t)r;
            off += r;
          }
          queued = 0;
        }
      }
    }
    next.tv_nsec += 40 * 1000 * 1000;
    if (next.tv_nsec >= 1000000000L) {
      next.tv_nsec -= 1000000000L;
      ++next.tv_sec;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  const double cpu = cpu_seconds() - cpu0;
  usleep(300 * 1000); /* the reader drains what is queued */
  kill(child, SIGTERM);
  uint64_t got[2] = {0, 0};
  if (read(pipefd[0], got, sizeof got) != (ssize_t)sizeof got) fprintf(stderr, "udp_floor: no count from the reader\n");
  waitpid(child, NULL, 0);
  const double gb = (double)sent * size / 1e9;
  printf(
      "mode=%s players=%d per_frame=%d size=%d seconds=%d sent=%llu dropped=%llu received=%llu calls=%llu "
      "cpu_s=%.3f us_per_datagram=%.2f cpu_s_per_gb=%.2f\n",
      mode, n, per_frame, size, seconds, (unsigned long long)sent, (unsigned long long)dropped,
      (unsigned long long)got[0], (unsigned long long)calls, cpu, sent ? cpu * 1e6 / (double)sent : 0,
      gb > 0 ? cpu / gb : 0);
  return 0;
}

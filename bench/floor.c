/*
 * The kernel floor: what it costs to push the same bytes to N loopback TCP sockets when user space
 * does nothing but call send() on one static buffer.
 *
 * The program makes N loopback connection pairs (connect + accept on 127.0.0.1), then forks. The
 * child is the reader: it drains its N ends with epoll and large reads (optionally with SO_RCVLOWAT,
 * like sluice-bench's read batching). The parent is the writer: every connection is owed RATE bits
 * per second, and as soon as a connection is owed WRITE bytes (64 KiB by default) the writer sends
 * the same static WRITE-byte buffer to it with one nonblocking send() (a partial write continues
 * from where it stopped; EAGAIN waits for an edge-triggered EPOLLOUT). Connections start at random
 * phases so the writes spread over time. After SECONDS it reports the writer's own CPU time
 * (getrusage, user + system; on loopback that includes the TCP receive path the kernel runs in the
 * sender's context, exactly as it does for a media server) per GB written.
 *
 * With -u the writer batches instead: every 10 ms tick, each connection owed a whole buffer gets one
 * nonblocking send queued on an io_uring, and one io_uring_enter submits them all (what Sluice's
 * rtmp.io_uring does at the end of a write hold); a connection whose send comes back EAGAIN waits
 * for EPOLLOUT as before.
 *
 * Build: cc -O2 -o floor bench/floor.c -luring
 * Usage: floor -n N [-d SECONDS] [-r KBIT_PER_CONN] [-w WRITE_BYTES] [-l RCVLOWAT] [-u]
 * Output: one line of key=value pairs on stdout (compare.sh parses it), details on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

struct conn {
  int fd;
  double owed;   /* bytes owed to this connection (credit) */
  size_t offset; /* position in the current write of the buffer (partial writes) */
  int blocked;   /* last send() returned EAGAIN; waiting for EPOLLOUT */
  int queued;    /* -u: a send is queued on the ring */
};

static void die(const char* what) {
  perror(what);
  exit(2);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(const struct rusage* ru, double* user, double* sys) {
  *user = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
  *sys = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
  return *user + *sys;
}

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s -n N [-d SECONDS] [-r KBIT_PER_CONN] [-w WRITE_BYTES] [-l RCVLOWAT] [-u]\n"
          "  -n  connections (required)\n"
          "  -d  seconds of writing (default 10)\n"
          "  -r  rate per connection in kbit/s (default 2528: a 2400k video + 128k audio stream)\n"
          "  -w  bytes per write, the size of the one static buffer (default 65536)\n"
          "  -l  reader SO_RCVLOWAT in bytes, 0 = off (default 32768)\n"
          "  -u  batch each tick's sends through io_uring (one submit per tick)\n",
          argv0);
  exit(2);
}

/* The reader: drain every socket until all of them reach end of file. */
static void reader(int* fds, int n, int lowat) {
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  for (int i = 0; i < n; ++i) {
    if (lowat > 0 && setsockopt(fds[i], SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) < 0) die("SO_RCVLOWAT");
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) die("epoll_ctl reader");
  }
  static char buf[256 * 1024];
  struct epoll_event evs[256];
  int open = n;
  while (open > 0) {
    int k = epoll_wait(ep, evs, 256, 60000);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait reader");
    }
    if (k == 0) break; /* the writer vanished */
    for (int e = 0; e < k; ++e) {
      int i = (int)evs[e].data.u32;
      ssize_t r = read(fds[i], buf, sizeof buf);
      if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR))) continue;
      epoll_ctl(ep, EPOLL_CTL_DEL, fds[i], NULL);
      close(fds[i]);
      --open;
    }
  }
  _exit(0);
}

/* -u: one nonblocking send of the rest of the buffer, queued (the ring is submitted when full). */
static void ring_queue(struct io_uring* ring, struct conn* k, const char* buf, size_t wsize, int index) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (!sqe) {
    io_uring_submit(ring);
    sqe = io_uring_get_sqe(ring);
    if (!sqe) die("io_uring_get_sqe");
  }
  io_uring_prep_send(sqe, k->fd, buf + k->offset, wsize - k->offset, MSG_NOSIGNAL | MSG_DONTWAIT);
  io_uring_sqe_set_data64(sqe, (uint64_t)index);
  k->queued = 1;
}

/* -u: submit what is queued and account every completion as PUSH does for send(). */
static void ring_submit(struct io_uring* ring, struct conn* c, size_t wsize, uint64_t* written, uint64_t* sends,
                        uint64_t* eagains, uint64_t* partial) {
  if (io_uring_submit(ring) < 0) die("io_uring_submit");
  struct io_uring_cqe* cqe;
  unsigned head, seen = 0;
  io_uring_for_each_cqe(ring, head, cqe) {
    struct conn* k = &c[io_uring_cqe_get_data64(cqe)];
    ++seen;
    ++*sends;
    k->queued = 0;
    if (cqe->res == -EAGAIN) {
      k->blocked = 1;
      ++*eagains;
      continue;
    }
    if (cqe->res < 0) {
      errno = -cqe->res;
      die("io_uring send");
    }
    *written += (uint64_t)cqe->res;
    k->owed -= (double)cqe->res;
    k->offset += (size_t)cqe->res;
    if (k->offset == wsize)
      k->offset = 0;
    else
      ++*partial;
  }
  io_uring_cq_advance(ring, seen);
}

int main(int argc, char** argv) {
  int n = 0, lowat = 32768, use_ring = 0;
  double seconds = 10, kbit = 2528;
  size_t wsize = 65536;
  int opt;
  while ((opt = getopt(argc, argv, "n:d:r:w:l:uh")) != -1) {
    switch (opt) {
      case 'n': n = atoi(optarg); break;
      case 'd': seconds = atof(optarg); break;
      case 'r': kbit = atof(optarg); break;
      case 'w': wsize = (size_t)atol(optarg); break;
      case 'l': lowat = atoi(optarg); break;
      case 'u': use_ring = 1; break;
      default: usage(argv[0]);
    }
  }
  if (n <= 0 || seconds <= 0 || seconds > 3600 || kbit <= 0 || wsize == 0 || wsize > (1u << 24)) usage(argv[0]);
  signal(SIGPIPE, SIG_IGN);

  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)(2 * n + 64)) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }

  /* N loopback connection pairs. */
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (lfd < 0) die("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof addr;
  if (bind(lfd, (struct sockaddr*)&addr, sizeof addr) < 0) die("bind");
  if (listen(lfd, 128) < 0) die("listen");
  if (getsockname(lfd, (struct sockaddr*)&addr, &alen) < 0) die("getsockname");
  int* wfds = calloc((size_t)n, sizeof *wfds);
  int* rfds = calloc((size_t)n, sizeof *rfds);
  if (!wfds || !rfds) die("calloc");
  for (int i = 0; i < n; ++i) {
    rfds[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (rfds[i] < 0) die("socket");
    if (connect(rfds[i], (struct sockaddr*)&addr, sizeof addr) < 0) die("connect");
    wfds[i] = accept(lfd, NULL, NULL);
    if (wfds[i] < 0) die("accept");
  }
  close(lfd);

  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    for (int i = 0; i < n; ++i) close(wfds[i]);
    reader(rfds, n, lowat);
  }
  for (int i = 0; i < n; ++i) close(rfds[i]);

  /* The writer. */
  char* buf = malloc(wsize);
  if (!buf) die("malloc");
  srand(12345);
  for (size_t i = 0; i < wsize; ++i) buf[i] = (char)rand();
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  struct conn* c = calloc((size_t)n, sizeof *c);
  if (!c) die("calloc");
  for (int i = 0; i < n; ++i) {
    c[i].fd = wfds[i];
    int fl = fcntl(wfds[i], F_GETFL);
    if (fl < 0 || fcntl(wfds[i], F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl");
    c[i].owed = (double)(rand() % (int)wsize); /* random phase */
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLET, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, wfds[i], &ev) < 0) die("epoll_ctl writer");
  }

  struct io_uring ring;
  if (use_ring) {
    int rc = io_uring_queue_init((unsigned)(n < 4096 ? n : 4096), &ring, 0);
    if (rc < 0) {
      errno = -rc;
      die("io_uring_queue_init");
    }
  }
  const double rate = kbit * 1000.0 / 8.0; /* bytes per second per connection */
  uint64_t written = 0, sends = 0, eagains = 0, partial = 0;
  double max_owed = 0;
  struct rusage ru0, ru1;
  getrusage(RUSAGE_SELF, &ru0);
  const double t0 = now_s();
  const double tick = 0.010;
  double last = t0, next_tick = t0;
  struct epoll_event evs[512];
#define PUSH(k)                                                                      \
  while (!(k)->blocked && ((k)->offset > 0 || (k)->owed >= (double)wsize)) {         \
    ssize_t w = send((k)->fd, buf + (k)->offset, wsize - (k)->offset, MSG_NOSIGNAL); \
    ++sends;                                                                         \
    if (w < 0) {                                                                     \
      if (errno == EAGAIN || errno == EWOULDBLOCK) {                                 \
        (k)->blocked = 1;                                                            \
        ++eagains;                                                                   \
        break;                                                                       \
      }                                                                              \
      if (errno == EINTR) continue;                                                  \
      die("send");                                                                   \
    }                                                                                \
    written += (uint64_t)w;                                                          \
    (k)->owed -= (double)w;                                                          \
    (k)->offset += (size_t)w;                                                        \
    if ((k)->offset == wsize)                                                        \
      (k)->offset = 0;                                                               \
    else                                                                             \
      ++partial;                                                                     \
  }
  for (;;) {
    double t = now_s();
    if (t - t0 >= seconds) break;
    if (t >= next_tick) {
      /* Every connection earns credit at its rate; those owed a whole buffer get it. */
      double dt = t - last;
      last = t;
      next_tick += tick;
      if (next_tick < t) next_tick = t + tick;
      for (int i = 0; i < n; ++i) {
        struct conn* k = &c[i];
        k->owed += rate * dt;
        if (k->owed > max_owed) max_owed = k->owed;
        if (use_ring) {
          if (!k->blocked && !k->queued && (k->offset > 0 || k->owed >= (double)wsize))
            ring_queue(&ring, k, buf, wsize, i);
        } else {
          PUSH(k)
        }
      }
      if (use_ring) ring_submit(&ring, c, wsize, &written, &sends, &eagains, &partial);
    }
    /* Sleep until the next tick, or until a blocked socket becomes writable again. */
    int timeout = (int)((next_tick - now_s()) * 1000.0 + 0.999);
    if (timeout < 0) timeout = 0;
    int m = epoll_wait(ep, evs, 512, timeout);
    for (int e = 0; e < m; ++e) {
      struct conn* k = &c[evs[e].data.u32];
      k->blocked = 0;
      if (!use_ring) PUSH(k) /* with -u, the next tick queues it */
    }
  }
#undef PUSH
  const double elapsed = now_s() - t0;
  getrusage(RUSAGE_SELF, &ru1);
  double u0, s0, u1, s1;
  double cpu = cpu_s(&ru1, &u1, &s1) - cpu_s(&ru0, &u0, &s0);

  for (int i = 0; i < n; ++i) close(c[i].fd);
  int status = 0;
  struct rusage rch;
  memset(&rch, 0, sizeof rch);
  wait4(child, &status, 0, &rch);
  double ru_, rs_;
  double reader_cpu = cpu_s(&rch, &ru_, &rs_);

  const double gb = (double)written / 1e9;
  const double expected = rate * elapsed * n;
  printf(
      "floor n=%d seconds=%.2f write_bytes=%zu kbit_per_conn=%.0f bytes=%llu mbps=%.1f "
      "delivered_pct=%.1f writer_cpu_s=%.3f writer_user_s=%.3f writer_sys_s=%.3f cpu_s_per_gb=%.3f "
      "sends=%llu sends_per_conn_per_s=%.2f eagain=%llu partial=%llu reader_cpu_s=%.3f\n",
      n, elapsed, wsize, kbit, (unsigned long long)written, (double)written * 8 / elapsed / 1e6,
      expected > 0 ? (double)written / expected * 100 : 0, cpu, u1 - u0, s1 - s0, gb > 0 ? cpu / gb : 0,
      (unsigned long long)sends, (double)sends / n / elapsed, (unsigned long long)eagains, (unsigned long long)partial,
      reader_cpu);
  fprintf(stderr,
          "floor: %d connections, %.1f s, %.2f GB written (%.1f%% of the %.0f kbit/s asked per connection), "
          "writer %.2f CPU-s (%.0f%% of one core) = %.3f CPU-s/GB; largest credit %.0f bytes\n",
          n, elapsed, gb, expected > 0 ? (double)written / expected * 100 : 0, kbit, cpu, cpu / elapsed * 100,
          gb > 0 ? cpu / gb : 0, max_owed);
  return 0;
}

// Does the host stop this VM? One probe thread pinned to each CPU wakes on an absolute
// 2 ms schedule at real-time priority (SCHED_FIFO 90, when allowed) and records how late
// each wake-up is. Nothing in the guest outranks it, so a wake-up late by several ms on
// every CPU at once means the VM itself was off the CPU. Late wake-ups are binned by
// where they fall on a 100 ms grid of CLOCK_MONOTONIC: a host that throttles the VM
// each scheduling period shows them bunched in one or two bins, not spread.
//
// Optional load beside the probes, to tell the cases apart: --spin K busy threads, and
// --write-rate R writes of 4 KiB per second with O_DSYNC | O_DIRECT, rewriting the first
// 64 KiB of --file (the log's cycles rewrite a file's tail block the same way).
//
//   freeze_probe [--seconds S | --until-eof] [--spin K] [--write-rate R --file PATH]
//
// Prints one JSON line. Used by bench/host.ts (npm run bench:host) and by
// bench/grpc.ts --freeze-probe. Written in C++ rather than JavaScript because a probe
// that runs on Node's event loop would measure the loop, not the host.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kPeriodNs = 2'000'000;
constexpr double kLateMs = 4.0;  // a tick at HZ 250: less can be the guest's own jitter
constexpr int kBins = 10;        // of the 100 ms grid

std::atomic<bool> g_stop{false};

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "freeze_probe: %s: %s\n", what.c_str(), strerror(errno));
  exit(2);
}

struct ProbeResult {
  long wakeups = 0;
  long late = 0;       // > kLateMs
  long late8 = 0;      // > 8 ms
  double max_ms = 0;
  double late_ms = 0;  // their lateness summed: the time the stops took
  long bins[kBins] = {};
};

// Owned by its own thread until joined.
struct Probe {
  int cpu;
  bool realtime = false;
  ProbeResult r;
  std::thread t;
};

void RunProbe(Probe* p) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(p->cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    errno = EINVAL;
    Die("pthread_setaffinity_np cpu " + std::to_string(p->cpu));
  }
  sched_param sp{};
  sp.sched_priority = 90;
  // Without CAP_SYS_NICE the probe runs at normal priority; its output says so.
  p->realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!g_stop.load(std::memory_order_relaxed)) {
    next.tv_nsec += kPeriodNs;
    if (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      next.tv_sec++;
    }
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr)) == EINTR) {
    }
    if (rc != 0) {
      errno = rc;
      Die("clock_nanosleep");
    }
    double due = next.tv_sec * 1e3 + next.tv_nsec / 1e6;
    timespec woke;
    clock_gettime(CLOCK_MONOTONIC, &woke);
    double late = woke.tv_sec * 1e3 + woke.tv_nsec / 1e6 - due;
    // The deadlines missed meanwhile are the same stop: restart the schedule from
    // now, so that one stop counts once, with its length.
    if (late * 1e6 > kPeriodNs) next = woke;
    p->r.wakeups++;
    p->r.max_ms = std::max(p->r.max_ms, late);
    if (late > kLateMs) {
      p->r.late++;
      p->r.late_ms += late;
      if (late > 8) p->r.late8++;
      // The bin of the moment the wake-up was due: where the stop began, or before.
      p->r.bins[static_cast<long>(due) % 100 / (100 / kBins)]++;
    }
  }
}

void Spin() {
  volatile unsigned long x = 0;
  while (!g_stop.load(std::memory_order_relaxed))
    for (int i = 0; i < 100000; i++) x = x + 1;
}

struct WriteResult {
  std::vector<double> lat;
};

void Write(const std::string& path, int rate, WriteResult* out) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_DSYNC | O_DIRECT, 0644);
  if (fd < 0) Die("open " + path);
  void* buf;
  if (posix_memalign(&buf, 4096, 4096) != 0) Die("posix_memalign");
  memset(buf, 0x61, 4096);
  double t0 = NowMs();
  for (long n = 0; !g_stop.load(std::memory_order_relaxed); n++) {
    off_t off = (n % 16) * 4096;
    double s = NowMs();
    ssize_t w = pwrite(fd, buf, 4096, off);
    if (w != 4096) Die("pwrite " + path + " at " + std::to_string(off));
    out->lat.push_back(NowMs() - s);
    double next = t0 + (n + 1) * 1000.0 / rate;
    for (double now = NowMs(); now < next && !g_stop.load(std::memory_order_relaxed); now = NowMs()) {
      timespec d{0, static_cast<long>((next - now) * 1e6)};
      nanosleep(&d, nullptr);
    }
  }
  free(buf);
  if (close(fd) != 0) Die("close " + path);
  if (unlink(path.c_str()) != 0) Die("unlink " + path);
}

double Pct(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  bool until_eof = false;
  int spin = 0, write_rate = 0;
  std::string file;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "freeze_probe: %s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--seconds") seconds = atof(val().c_str());
    else if (a == "--until-eof") until_eof = true;
    else if (a == "--spin") spin = atoi(val().c_str());
    else if (a == "--write-rate") write_rate = atoi(val().c_str());
    else if (a == "--file") file = val();
    else {
      fprintf(stderr, "freeze_probe: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (write_rate > 0 && file.empty()) {
    fprintf(stderr, "freeze_probe: --write-rate needs --file\n");
    return 2;
  }
  int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (cpus < 1) Die("sysconf(_SC_NPROCESSORS_ONLN)");
  std::vector<Probe> probes(cpus);
  double t0 = NowMs();
  for (int c = 0; c < cpus; c++) {
    probes[c].cpu = c;
    probes[c].t = std::thread(RunProbe, &probes[c]);
  }
  std::vector<std::thread> load;
  for (int i = 0; i < spin; i++) load.emplace_back(Spin);
  WriteResult wr;
  if (write_rate > 0) load.emplace_back(Write, file, write_rate, &wr);
  if (until_eof) {
    char b[256];
    while (read(0, b, sizeof b) > 0) {
    }
  } else {
    timespec d{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
  }
  g_stop = true;
  for (auto& p : probes) p.t.join();
  for (auto& t : load) t.join();
  double elapsed = NowMs() - t0;

  ProbeResult all;
  bool realtime = true;
  std::string per_cpu;
  for (auto& p : probes) {
    realtime = realtime && p.realtime;
    all.wakeups += p.r.wakeups;
    all.late += p.r.late;
    all.late8 += p.r.late8;
    all.late_ms += p.r.late_ms;
    all.max_ms = std::max(all.max_ms, p.r.max_ms);
    for (int b = 0; b < kBins; b++) all.bins[b] += p.r.bins[b];
    per_cpu += (per_cpu.empty() ? "" : ",") + std::to_string(p.r.late);
  }
  std::string bins;
  for (int b = 0; b < kBins; b++) bins += (b ? "," : "") + std::to_string(all.bins[b]);
  printf("{\"seconds\":%.2f,\"cpus\":%d,\"realtime\":%s,\"wakeups\":%ld,\"late\":%ld,\"late8\":%ld,\"lateMs\":%.1f,\"maxMs\":%.2f,\"lateByCpu\":[%s],\"bins\":[%s]",
         elapsed / 1000, cpus, realtime ? "true" : "false", all.wakeups, all.late, all.late8, all.late_ms, all.max_ms, per_cpu.c_str(), bins.c_str());
  if (write_rate > 0) {
    long slow = std::count_if(wr.lat.begin(), wr.lat.end(), [](double v) { return v > kLateMs; });
    size_t n = wr.lat.size();
    printf(",\"writes\":%zu,\"writeP50\":%.2f,\"writeP99\":%.2f,\"writeP999\":%.2f,\"writeMax\":%.2f,\"writesOver4\":%ld", n, Pct(wr.lat, 0.5), Pct(wr.lat, 0.99),
           Pct(wr.lat, 0.999), Pct(wr.lat, 1.0), slow);
  }
  printf("}\n");
  return 0;
}

// Does the host stop this VM? One probe thread pinned to each CPU this process may use
// wakes on an absolute 2 ms schedule at real-time priority (SCHED_FIFO 90, when allowed)
// and records how late each wake-up is. Nothing in the guest outranks it, so a wake-up
// late by several ms means its vCPU was off the CPU; when every CPU's probe was late
// over the same moment, the whole VM was. Late wake-ups are binned by where they fall
// on a 100 ms grid of CLOCK_MONOTONIC: a host that throttles the VM each scheduling
// period shows them bunched in one or two bins, not spread.
//
// Optional load beside the probes, to tell the cases apart: --spin K busy threads, and
// --write-rate R writes of 4 KiB per second with O_DSYNC | O_DIRECT (O_DSYNC alone where
// the file system refuses O_DIRECT), rewriting the first 64 KiB of --file (the log's
// cycles rewrite a file's tail block the same way).
//
//   freeze_probe [--seconds S | --until-eof] [--spin K] [--write-rate R --file PATH]
//
// Prints one JSON line; exits 2 on a bad argument or a failed system call. Used by
// bench/host.ts (npm run bench:host) and bench/grpc.ts --freeze-probe. Written in C++
// rather than JavaScript because a probe that runs on Node's event loop would measure
// the loop, not the host.
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
// Above the guest's own wake-up delay: with PREEMPT_NONE a real-time thread still
// waits for a syscall in progress on its vCPU to reach a preemption point, which took
// up to 2.5 ms here under the write load (idle: 0.6 ms).
constexpr double kLateMs = 4.0;
constexpr int kBins = 10;              // of the 100 ms grid
constexpr size_t kMaxStops = 100'000;  // per CPU: ~3 minutes of a stop every 2 ms

std::atomic<bool> g_stop{false};

double Ms(const timespec& t) { return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

double NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return Ms(t);
}

[[noreturn]] void Die(const std::string& what, int err) {
  fprintf(stderr, "freeze_probe: %s: %s\n", what.c_str(), strerror(err));
  exit(2);
}

[[noreturn]] void Usage(const std::string& what) {
  fprintf(stderr, "freeze_probe: %s\n", what.c_str());
  exit(2);
}

struct Stop {
  double from, to;  // when the wake-up was due, when it came (ms, CLOCK_MONOTONIC)
};

// Owned by its probe thread until joined, then by main.
struct Probe {
  int cpu = 0;
  bool realtime = false;
  long wakeups = 0;
  double max_ms = 0;
  long bins[kBins] = {};
  std::vector<Stop> stops;
  std::thread t;
};

void RunProbe(Probe* p) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(p->cpu, &set);
  if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0) Die("pthread_setaffinity_np cpu " + std::to_string(p->cpu), rc);
  sched_param sp{};
  sp.sched_priority = 90;
  // Without CAP_SYS_NICE the probe runs at normal priority; its output says so.
  p->realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  p->stops.reserve(1024);
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
    if (rc != 0) Die("clock_nanosleep", rc);
    timespec woke;
    clock_gettime(CLOCK_MONOTONIC, &woke);
    double due = Ms(next), late = Ms(woke) - due;
    p->wakeups++;
    p->max_ms = std::max(p->max_ms, late);
    if (late > kLateMs) {
      if (p->stops.size() < kMaxStops) p->stops.push_back({due, Ms(woke)});
      // The bin of the moment the wake-up was due: where the stop began, or before.
      p->bins[static_cast<long>(due) % 100 / (100 / kBins)]++;
    }
    // The deadlines missed meanwhile are the same stop: restart the schedule from
    // now, so that one stop counts once, with its length.
    if (late * 1e6 > kPeriodNs) next = woke;
  }
}

void Spin() {
  volatile unsigned long x = 0;
  while (!g_stop.load(std::memory_order_relaxed))
    for (int i = 0; i < 100000; i++) x = x + 1;
}

// Owned by the writer thread until joined, then by main.
struct WriteResult {
  bool direct = true;
  std::vector<double> lat;
};

void Write(const std::string& path, int rate, WriteResult* out) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_DSYNC | O_DIRECT, 0644);
  if (fd < 0 && errno == EINVAL) {  // tmpfs before Linux 6.6, and others
    out->direct = false;
    fd = open(path.c_str(), O_WRONLY | O_CREAT | O_DSYNC, 0644);
  }
  if (fd < 0) Die("open " + path, errno);
  void* buf = nullptr;
  if (int rc = posix_memalign(&buf, 4096, 4096); rc != 0) Die("posix_memalign 4096", rc);
  memset(buf, 0x61, 4096);
  out->lat.reserve(static_cast<size_t>(rate) * 16);
  double t0 = NowMs();
  for (long n = 0; !g_stop.load(std::memory_order_relaxed); n++) {
    off_t off = (n % 16) * 4096;
    double s = NowMs();
    ssize_t w = pwrite(fd, buf, 4096, off);
    if (w < 0) Die("pwrite " + path + " at " + std::to_string(off), errno);
    if (w != 4096) Die("pwrite " + path + " at " + std::to_string(off) + ": wrote " + std::to_string(w) + " of 4096", EIO);
    out->lat.push_back(NowMs() - s);
    double next = t0 + (n + 1) * 1000.0 / rate;
    for (double now = NowMs(); now < next && !g_stop.load(std::memory_order_relaxed); now = NowMs()) {
      timespec d{0, static_cast<long>((next - now) * 1e6)};
      nanosleep(&d, nullptr);
    }
  }
  free(buf);
  if (close(fd) != 0) Die("close " + path, errno);
  if (unlink(path.c_str()) != 0) Die("unlink " + path, errno);
}

double Pct(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

// Stops of the first CPU's probe that every other CPU's probe was also stopped during
// (their late spans overlap): the VM off all its CPUs at once, not one vCPU taken.
long Together(const std::vector<Probe>& probes) {
  if (probes.size() < 2) return 0;
  long n = 0;
  for (const Stop& s : probes[0].stops) {
    bool all = true;
    for (size_t c = 1; c < probes.size() && all; c++) {
      const auto& other = probes[c].stops;
      // Sorted by `from`: the last one starting before s ends is the only candidate
      // not already over (stops of one probe do not overlap each other).
      auto it = std::upper_bound(other.begin(), other.end(), s.to, [](double t, const Stop& o) { return t < o.from; });
      all = it != other.begin() && std::prev(it)->to > s.from;
    }
    if (all) n++;
  }
  return n;
}

double Number(const std::string& flag, const char* v, double min, double max) {
  char* end = nullptr;
  errno = 0;
  double d = strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(d >= min && d <= max))
    Usage(flag + " takes a number from " + std::to_string(min) + " to " + std::to_string(max) + ", got \"" + v + "\"");
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  bool until_eof = false;
  int spin = 0, write_rate = 0;
  std::string file;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seconds") seconds = Number(a, val(), 0.01, 86400);
    else if (a == "--until-eof") until_eof = true;
    else if (a == "--spin") spin = static_cast<int>(Number(a, val(), 0, 1024));
    else if (a == "--write-rate") write_rate = static_cast<int>(Number(a, val(), 1, 100000));
    else if (a == "--file") file = val();
    else Usage("unknown argument " + a);
  }
  if (write_rate > 0 && file.empty()) Usage("--write-rate needs --file");

  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) Die("sched_getaffinity", errno);
  std::vector<Probe> probes(CPU_COUNT(&allowed));
  for (int cpu = 0, k = 0; k < static_cast<int>(probes.size()); cpu++)
    if (CPU_ISSET(cpu, &allowed)) probes[k++].cpu = cpu;
  double t0 = NowMs();
  for (auto& p : probes) p.t = std::thread(RunProbe, &p);
  std::vector<std::thread> load;
  for (int i = 0; i < spin; i++) load.emplace_back(Spin);
  WriteResult wr;
  if (write_rate > 0) load.emplace_back(Write, file, write_rate, &wr);
  if (until_eof) {
    char b[256];
    for (;;) {
      ssize_t r = read(0, b, sizeof b);
      if (r == 0) break;
      if (r < 0 && errno != EINTR) Die("read stdin", errno);
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

  long wakeups = 0, late = 0, late8 = 0, bins[kBins] = {};
  double late_ms = 0, max_ms = 0;
  bool realtime = true;
  std::string per_cpu;
  for (auto& p : probes) {
    realtime = realtime && p.realtime;
    wakeups += p.wakeups;
    max_ms = std::max(max_ms, p.max_ms);
    for (const Stop& s : p.stops) {
      late++;
      late_ms += s.to - s.from;
      if (s.to - s.from > 8) late8++;
    }
    for (int b = 0; b < kBins; b++) bins[b] += p.bins[b];
    per_cpu += (per_cpu.empty() ? "" : ",") + std::to_string(p.stops.size());
  }
  std::string bin_list;
  for (int b = 0; b < kBins; b++) bin_list += (b ? "," : "") + std::to_string(bins[b]);
  printf("{\"seconds\":%.2f,\"cpus\":%zu,\"realtime\":%s,\"wakeups\":%ld,\"late\":%ld,\"late8\":%ld,\"together\":%ld,\"lateMs\":%.1f,\"maxMs\":%.2f,\"lateByCpu\":[%s],\"bins\":[%s]",
         elapsed / 1000, probes.size(), realtime ? "true" : "false", wakeups, late, late8, Together(probes), late_ms, max_ms, per_cpu.c_str(), bin_list.c_str());
  if (write_rate > 0) {
    long slow = std::count_if(wr.lat.begin(), wr.lat.end(), [](double v) { return v > kLateMs; });
    size_t n = wr.lat.size();
    printf(",\"direct\":%s,\"writes\":%zu,\"writeP50\":%.2f,\"writeP99\":%.2f,\"writeP999\":%.2f,\"writeMax\":%.2f,\"writesOver4\":%ld", wr.direct ? "true" : "false", n,
           Pct(wr.lat, 0.5), Pct(wr.lat, 0.99), Pct(wr.lat, 0.999), Pct(wr.lat, 1.0), slow);
  }
  printf("}\n");
  return 0;
}

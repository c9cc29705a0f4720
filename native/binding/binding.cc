// N-API surface of the core. Only src/native.ts loads this. Every object here is
// owned by the JS thread (main or worker) whose env created it; the I/O thread talks
// back only through the ThreadSafeFunction, one call per group-commit cycle.
#include <napi.h>
#include <uv.h>
#include <poll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>

#include <memory>
#include <new>
#include <string>
#include <functional>
#include <cstring>
#include <vector>

#include "fetch/fetch_bench.h"
#include "fetch/fetch_protocol.h"
#include "fetch/fetch_server.h"
#include "fetch/partition_directory.h"
#include "log/crc32c.h"
#include "log/dir_lock.h"
#include "log/log_engine.h"
#include "log/partition_log.h"
#include "log/power_cut.h"
#include "log/record_batch.h"
#include "uring/io_uring.h"

namespace uringmq {
namespace {

struct AddonData {
  Napi::FunctionReference partition_ctor;
  Napi::FunctionReference engine_ctor;
};

Napi::Error MakeError(Napi::Env env, Code code, const std::string& msg) {
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("code", Napi::String::New(env, CodeName(code)));
  return e;
}
Napi::Error MakeError(Napi::Env env, const Status& s) { return MakeError(env, s.code, s.message); }

// Raw-N-API helpers for code that runs when the env may be shutting down (worker
// terminate, process exit): every status is checked and a failure means "give up
// quietly". node-addon-api's wrappers would turn such a failure into a fatal error.
bool RawError(napi_env env, Code code, const std::string& msg, napi_value* out) {
  napi_value m, c;
  if (napi_create_string_utf8(env, msg.data(), msg.size(), &m) != napi_ok) return false;
  if (napi_create_error(env, nullptr, m, out) != napi_ok) return false;
  if (napi_create_string_utf8(env, CodeName(code), NAPI_AUTO_LENGTH, &c) != napi_ok) return false;
  return napi_set_named_property(env, *out, "code", c) == napi_ok;
}

bool RawTypedArray(napi_env env, napi_typedarray_type type, size_t n, size_t elem, void** data, napi_value* out) {
  napi_value ab;
  if (napi_create_arraybuffer(env, n * elem, data, &ab) != napi_ok) return false;
  return napi_create_typedarray(env, type, n, ab, 0, out) == napi_ok;
}

// Settles a promise; on a failed settle there is nobody left to tell.
void Settle(napi_env env, napi_deferred d, bool ok, napi_value v) {
  if (ok) napi_resolve_deferred(env, d, v);
  else napi_reject_deferred(env, d, v);
}

// Rejects with the typed error for `s` when it is not ok; true if it rejected.
bool RejectIfError(napi_env env, napi_deferred d, const Status& s) {
  if (s.ok()) return false;
  napi_value v;
  if (RawError(env, s.code, s.message, &v)) Settle(env, d, false, v);
  return true;
}

// 2^53 - 1: every option is a JavaScript number, exact up to here.
constexpr int64_t kMaxSafeInteger = 9007199254740991;

[[noreturn]] void ThrowInvalid(Napi::Env env, const std::string& msg) {
  throw MakeError(env, Code::kInvalidArgument, msg);
}

// An integer option within [lo, hi]. Checked as a double before any conversion: the
// cast of NaN or of a value outside int64's range is undefined behaviour, and a value
// the casts below wrap (a negative size, 2^32 + 1 for a uint32) would be taken silently.
int64_t GetInt(Napi::Env env, const Napi::Object& o, const char* key, int64_t dflt, int64_t lo = -kMaxSafeInteger,
               int64_t hi = kMaxSafeInteger) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return dflt;
  if (!v.IsNumber()) ThrowInvalid(env, std::string(key) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::trunc(d))
    ThrowInvalid(env, std::string(key) + " must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi));
  return static_cast<int64_t>(d);
}

// ---------------------------------------------------------------------------------
class PartitionWrap : public Napi::ObjectWrap<PartitionWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativePartition", {});
  }
  explicit PartitionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PartitionWrap>(info) {}
  std::shared_ptr<PartitionLog> log;
  // The engine (EngineWrap::id_) whose I/O thread owns the log: the only one that may
  // be handed this partition. Another engine's thread appending to it would stage and
  // write the same log concurrently with the owner's.
  uint64_t engine_id = 0;
  // Found by the open's scan of the log's tail; handed to JS once (takeProducerBatches).
  std::vector<ProducerBatch> producer_batches;
  std::string producer_scan_error;  // why the scan stopped early, if it did
};

PartitionWrap* UnwrapPartition(Napi::Env env, Napi::Value v, uint64_t engine_id) {
  auto* data = env.GetInstanceData<AddonData>();
  if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(data->partition_ctor.Value()))
    ThrowInvalid(env, "expected a NativePartition");
  PartitionWrap* w = PartitionWrap::Unwrap(v.As<Napi::Object>());
  if (!w->log) ThrowInvalid(env, "partition is not open");
  if (w->engine_id != engine_id) ThrowInvalid(env, "partition " + w->log->label() + " was opened by another NativeEngine");
  return w;
}

// ---------------------------------------------------------------------------------
// Async work on the libuv pool. Execute() never sees the env; OnOK() settles a raw
// promise with checked calls (see RawError), so a completion that lands while a
// worker thread terminates is dropped instead of aborting the process.
class OpenPartitionWorker : public Napi::AsyncWorker {
 public:
  using OnOpen = std::function<void(const std::shared_ptr<PartitionLog>&)>;
  // `owner` (the engine's JS object) is held until OnOK, so `on_open` can use it.
  OpenPartitionWorker(Napi::Env env, PartitionConfig cfg, uint64_t scan_bytes, int64_t scan_from, size_t scan_batches, size_t scan_per_producer,
                      Napi::Object owner, uint64_t engine_id, OnOpen on_open)
      : Napi::AsyncWorker(env, "uringmq.openPartition"),
        cfg_(std::move(cfg)),
        engine_id_(engine_id),
        scan_bytes_(scan_bytes),
        scan_from_(scan_from),
        scan_batches_(scan_batches),
        scan_per_producer_(scan_per_producer),
        owner_(Napi::Persistent(owner)),
        on_open_(std::move(on_open)) {
    if (napi_create_promise(env, &deferred_, &promise_) != napi_ok) throw Napi::Error::New(env, "cannot create a promise");
  }
  napi_value Promise() { return promise_; }
  void Execute() override {
    status_ = PartitionLog::Open(cfg_, &log_);
    if (!status_.ok()) return;
    // Not fatal: a bad batch there fails reads of it too, and only retried batches
    // need what it would have said. The broker warns.
    Status scan = log_->RecentProducerBatches(scan_bytes_, scan_from_, scan_batches_, scan_per_producer_, &producer_batches_);
    if (!scan.ok()) scan_error_ = scan.message;
  }
  void OnOK() override {
    napi_env env = Env();
    napi_value v;
    if (RejectIfError(env, deferred_, status_)) return;
    auto* data = Env().GetInstanceData<AddonData>();
    napi_value ctor = data->partition_ctor.Value();
    if (napi_new_instance(env, ctor, 0, nullptr, &v) != napi_ok) return;
    PartitionWrap* w = nullptr;
    if (napi_unwrap(env, v, reinterpret_cast<void**>(&w)) != napi_ok || !w) return;
    w->log = log_;
    w->engine_id = engine_id_;
    w->producer_batches = std::move(producer_batches_);
    w->producer_scan_error = std::move(scan_error_);
    on_open_(log_);
    Settle(env, deferred_, true, v);
  }
  void OnError(const Napi::Error&) override {}

 private:
  PartitionConfig cfg_;
  const uint64_t engine_id_;
  const uint64_t scan_bytes_;
  const int64_t scan_from_;
  const size_t scan_batches_;
  const size_t scan_per_producer_;
  std::vector<ProducerBatch> producer_batches_;
  std::string scan_error_;
  Napi::ObjectReference owner_;
  OnOpen on_open_;
  napi_deferred deferred_ = nullptr;
  napi_value promise_ = nullptr;
  Status status_;
  std::shared_ptr<PartitionLog> log_;
};

// The bytes of an ArrayBuffer view (a Buffer, any TypedArray, a DataView) as they are
// now, or false when they cannot be had or its ArrayBuffer is detached (transferred with
// postMessage or structuredClone, or by ArrayBuffer.prototype.transfer). Raw, checked
// calls: ReadWorker::OnOK uses it too (see RawError).
bool ViewBytes(napi_env env, napi_value v, uint8_t** data, size_t* len) {
  bool is_typed = false, is_view = false;
  napi_value ab = nullptr;
  void* d = nullptr;
  size_t n = 0, off = 0;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok) return false;
  if (is_typed) {
    napi_typedarray_type type;
    size_t count = 0;
    if (napi_get_typedarray_info(env, v, &type, &count, &d, &ab, &off) != napi_ok) return false;
  } else {
    if (napi_is_dataview(env, v, &is_view) != napi_ok || !is_view) return false;
    if (napi_get_dataview_info(env, v, &n, &d, &ab, &off) != napi_ok) return false;
  }
  bool detached = false;
  if (napi_is_detached_arraybuffer(env, ab, &detached) != napi_ok || detached) return false;
  // The byte length as it is now (a resizable ArrayBuffer may have shrunk).
  if (napi_get_buffer_info(env, v, &d, &n) != napi_ok) return false;
  *data = static_cast<uint8_t*>(d);
  *len = n;
  return true;
}

// Runs on a libuv pool thread (Execute) and the JS thread (the rest).
class ReadWorker : public Napi::AsyncWorker {
 public:
  // `dest_len`: the destination's byte length when the read was asked for (0: none).
  ReadWorker(Napi::Env env, std::shared_ptr<PartitionLog> log, int64_t offset, size_t max_bytes, Napi::Buffer<uint8_t>* dest = nullptr,
             size_t dest_len = 0)
      : Napi::AsyncWorker(env, "uringmq.read"), log_(std::move(log)), offset_(offset), max_bytes_(max_bytes) {
    if (napi_create_promise(env, &deferred_, &promise_) != napi_ok) throw Napi::Error::New(env, "cannot create a promise");
    if (dest && dest_len > 0) {
      dest_ref_ = Napi::Persistent(*dest);
      dest_len_ = dest_len;
    }
  }
  napi_value Promise() { return promise_; }
  void Execute() override {
    out_ = std::make_unique<std::vector<uint8_t>>();
    if (dest_len_ > 0) {
      // Read into memory of our own, copied into the caller's buffer on the JS thread
      // (OnOK) if it is still there. A reference keeps the Buffer object alive, not its
      // memory: detaching its ArrayBuffer (a transfer) meanwhile hands the memory to
      // another ArrayBuffer, maybe in another thread, which may free it while this
      // thread would still be writing. Nothing short of V8's own API can pin it.
      // (Still no fresh JS-heap buffer per read, which is what readInto spares.)
      // Sized for the read's window, not for dest: a window of dest's size (the
      // groups' dest is maxBytes) took only reads near a segment's end, the others
      // each came back in a Buffer of their own; and a large dest cost as large an
      // allocation per read. Not zeroed: only what the read wrote is copied.
      scratch_len_ = log_->ReadWindowBytes(std::min(max_bytes_, dest_len_));
      scratch_.reset(new (std::nothrow) uint8_t[scratch_len_]);
      if (!scratch_) {
        status_ = Status::Error(Code::kResourceExhausted, "cannot allocate " + std::to_string(scratch_len_) + " bytes for a read");
        return;
      }
      bool in_scratch = false;
      status_ = log_->ReadInto(offset_, max_bytes_, scratch_.get(), scratch_len_, &got_, out_.get(), &in_scratch);
      if (status_.ok() && (in_scratch || out_->empty())) {
        out_.reset();
      } else {
        scratch_.reset();  // out_ holds it: a first batch larger than the window
      }
      return;
    }
    status_ = log_->Read(offset_, max_bytes_, out_.get());
  }
  void OnOK() override {
    napi_env env = Env();
    napi_value v;
    if (RejectIfError(env, deferred_, status_)) return;
    if (dest_len_ > 0) {
      uint8_t* data = nullptr;
      size_t len = 0;
      napi_value dest;
      if (napi_get_reference_value(env, dest_ref_, &dest) != napi_ok || dest == nullptr || !ViewBytes(env, dest, &data, &len)) {
        if (RawError(env, Code::kInvalidArgument,
                     "readInto: the destination buffer was detached (its ArrayBuffer transferred) while the read ran; nothing was written to it",
                     &v))
          Settle(env, deferred_, false, v);
        return;
      }
      const uint8_t* src = scratch_ ? scratch_.get() : out_->data();
      const size_t n = scratch_ ? got_ : out_->size();
      if (n <= len) {
        if (n > 0) std::memcpy(data, src, n);
        if (napi_create_double(env, static_cast<double>(n), &v) != napi_ok) return;
        Settle(env, deferred_, true, v);
        return;
      }
      // Larger than dest (a first batch larger than it, or dest shrunk meanwhile): a
      // Buffer of its own, as readCachedInto answers, dest left as it was.
      if (scratch_) {
        uint8_t* mem = scratch_.get();
        if (napi_create_external_buffer(env, n, mem, [](napi_env, void* d, void*) { delete[] static_cast<uint8_t*>(d); }, nullptr, &v) != napi_ok)
          return;  // scratch_ still owns it
        scratch_.release();
        Settle(env, deferred_, true, v);
        return;
      }
    }
    auto* vec = out_.get();
    // Hand the vector's storage to the Buffer: no copy; freed by the finalizer.
    if (napi_create_external_buffer(
            env, vec->size(), vec->data(),
            [](napi_env, void*, void* hint) { delete static_cast<std::vector<uint8_t>*>(hint); }, vec, &v) != napi_ok)
      return;  // out_ still owns it
    out_.release();
    Settle(env, deferred_, true, v);
  }
  void OnError(const Napi::Error&) override {}

 private:
  std::shared_ptr<PartitionLog> log_;
  int64_t offset_;
  size_t max_bytes_;
  napi_deferred deferred_ = nullptr;
  napi_value promise_ = nullptr;
  Status status_;
  std::unique_ptr<std::vector<uint8_t>> out_;
  Napi::Reference<Napi::Buffer<uint8_t>> dest_ref_;
  std::unique_ptr<uint8_t[]> scratch_;  // what the read got (got_ bytes), unless out_ holds it
  size_t scratch_len_ = 0;
  size_t got_ = 0;
  size_t dest_len_ = 0;  // 0: read(), no destination
};

// ---------------------------------------------------------------------------------
class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeEngine",
                       {
                           InstanceAccessor<&EngineWrap::Backend>("backend"),
                           InstanceAccessor<&EngineWrap::BackendNote>("backendNote"),
                           InstanceAccessor<&EngineWrap::FlushNote>("flushNote"),
                           InstanceAccessor<&EngineWrap::Pending>("pending"),
                           InstanceAccessor<&EngineWrap::SyncPasses>("syncPasses"),
                           InstanceAccessor<&EngineWrap::ZeroAheadBytes>("zeroAheadBytes"),
                           InstanceAccessor<&EngineWrap::CacheFlushes>("cacheFlushes"),
                           InstanceAccessor<&EngineWrap::RetentionRemoveFailures>("retentionRemoveFailures"),
                           InstanceMethod<&EngineWrap::TakeWarnings>("takeWarnings"),
                           InstanceMethod<&EngineWrap::WriteLatency>("writeLatency"),
                           InstanceMethod<&EngineWrap::AppendLatency>("appendLatency"),
                           InstanceMethod<&EngineWrap::OpenPartition>("openPartition"),
                           InstanceMethod<&EngineWrap::Append>("append"),
                           InstanceMethod<&EngineWrap::Read>("read"),
                           InstanceMethod<&EngineWrap::ReadCached>("readCached"),
                           InstanceMethod<&EngineWrap::ReadInto>("readInto"),
                           InstanceMethod<&EngineWrap::ReadCachedInto>("readCachedInto"),
                           InstanceMethod<&EngineWrap::Info>("info"),
                           InstanceMethod<&EngineWrap::SetTailCacheBytes>("setTailCacheBytes"),
                           InstanceMethod<&EngineWrap::Offsets>("offsets"),
                           InstanceMethod<&EngineWrap::TakeProducerBatches>("takeProducerBatches"),
                           InstanceMethod<&EngineWrap::ClosePartition>("closePartition"),
                           InstanceMethod<&EngineWrap::Close>("close"),
                       });
  }

  explicit EngineWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EngineWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) ThrowInvalid(env, "NativeEngine(options) needs an options object");
    Napi::Object o = info[0].As<Napi::Object>();
    EngineOptions opts;
    std::string backend = o.Has("backend") ? o.Get("backend").ToString().Utf8Value() : "auto";
    if (backend == "auto") opts.backend = BackendChoice::kAuto;
    else if (backend == "io_uring") opts.backend = BackendChoice::kIoUring;
    else if (backend == "thread") opts.backend = BackendChoice::kThread;
    else ThrowInvalid(env, "backend must be 'auto', 'io_uring' or 'thread', got '" + backend + "'");
    std::string durability = o.Has("durability") ? o.Get("durability").ToString().Utf8Value() : "sync";
    if (durability == "sync") opts.durability = Durability::kSync;
    else if (durability == "interval") opts.durability = Durability::kInterval;
    else if (durability == "none") opts.durability = Durability::kNone;
    else ThrowInvalid(env, "durability must be 'sync', 'interval' or 'none'");
    opts.interval_ms = GetInt(env, o, "intervalMs", 100);
    if (opts.interval_ms < 1) ThrowInvalid(env, "intervalMs must be >= 1");
    opts.min_cycle_gap_us = GetInt(env, o, "groupCommitUs", 0);
    if (opts.min_cycle_gap_us < 0 || opts.min_cycle_gap_us > 100000) ThrowInvalid(env, "groupCommitUs must be 0 to 100000");
    {
      const int64_t z = GetInt(env, o, "zeroAheadBytes", static_cast<int64_t>(opts.zero_ahead_bytes));
      if (z < 0 || z > (64 << 20)) ThrowInvalid(env, "zeroAheadBytes must be 0 to 67108864");
      opts.zero_ahead_bytes = static_cast<size_t>(z);
    }
    {
      Napi::Value f = o.Get("flushDir");
      if (!f.IsUndefined() && !f.IsNull()) {
        if (!f.IsString() || f.As<Napi::String>().Utf8Value().empty()) ThrowInvalid(env, "flushDir must be a non-empty path");
        opts.flush_dir = f.As<Napi::String>().Utf8Value();
      }
    }
    opts.test_io_delay_ms = static_cast<uint32_t>(GetInt(env, o, "testIoDelayMs", 0, 0, 60'000));
    {
      Napi::Value f = o.Get("testUringFault");
      if (!f.IsUndefined()) {
        std::string kind = f.IsString() ? f.As<Napi::String>().Utf8Value() : "";
        if (kind == "submit") opts.test_uring_fault = 1;
        else if (kind == "wait") opts.test_uring_fault = 2;
        else if (kind == "short-submit-wait") opts.test_uring_fault = 3;
        else ThrowInvalid(env, "testUringFault must be 'submit', 'wait' or 'short-submit-wait'");
      }
    }
    {
      Napi::Value f = o.Get("testPowerCut");
      if (!f.IsUndefined() && !f.IsNull()) {
        if (!f.IsString() || f.As<Napi::String>().Utf8Value().empty()) ThrowInvalid(env, "testPowerCut must be a non-empty path");
        opts.test_power_cut = f.As<Napi::String>().Utf8Value();
      }
      opts.test_power_cut_kill_after = static_cast<uint64_t>(GetInt(env, o, "testPowerCutKillAfter", 0, 0, 1'000'000'000));
    }
    max_batch_bytes_ = static_cast<size_t>(GetInt(env, o, "maxBatchBytes", 16 << 20, 4096, 64 << 20));
    Napi::Value cb = o.Get("onComplete");
    if (!cb.IsFunction()) ThrowInvalid(env, "onComplete must be a function");

    // The TSFN and this wrapper die in either order (GC, close(), env teardown), so
    // the engine lives in a block both can reach; the last one out frees it. The TSFN
    // finalizer stops the I/O thread before the TSFN memory goes away.
    shared_ = new Shared();
    tsfn_ = Napi::ThreadSafeFunction::New(env, cb.As<Napi::Function>(), "uringmq.completions", 0, 1,
                                          [](Napi::Env, Shared* sh) {
                                            if (sh->engine) sh->engine->Stop();
                                            sh->tsfn_finalized = true;
                                            if (sh->wrap_gone) delete sh;
                                          },
                                          shared_);
    tsfn_.Unref(env);  // referenced only while appends are pending
    Napi::ThreadSafeFunction tsfn = tsfn_;
    Status s = LogEngine::Create(
        opts,
        [tsfn, this, signal = publish_signal_](std::vector<Completion>&& done) {
          signal->Notify();  // the cycle's batches are readable: wake fetch long-polls
          auto* batch = new std::vector<Completion>(std::move(done));
          napi_status st = tsfn.NonBlockingCall(batch, [this](Napi::Env env, Napi::Function fn, std::vector<Completion>* b) {
            std::unique_ptr<std::vector<Completion>> owned(b);
            if (env == nullptr || fn.IsEmpty()) return;
            Deliver(env, fn, *owned);
          });
          if (st != napi_ok) delete batch;  // env shutting down: nobody to tell
        },
        &shared_->engine);
    if (!s.ok()) {
      shared_->wrap_gone = true;  // no destructor runs when a constructor throws
      tsfn_.Release();
      tsfn_released_ = true;
      throw MakeError(env, s);
    }
  }

  // What a fetch server (FetchServerWrap) shares with this engine.
  const std::shared_ptr<PartitionDirectory>& directory() const { return directory_; }
  const std::shared_ptr<PublishSignal>& publish_signal() const { return publish_signal_; }

  ~EngineWrap() override {
    Shutdown();
    shared_->wrap_gone = true;
    if (shared_->tsfn_finalized) delete shared_;
  }

 private:
  struct Shared {
    std::unique_ptr<LogEngine> engine;
    bool tsfn_finalized = false;  // JS thread only, like everything in here
    bool wrap_gone = false;
  };

  // Stops the I/O thread (it has nothing in flight when called from close()) and
  // lets the TSFN go. Safe to call twice.
  void Shutdown() {
    if (shared_->engine) shared_->engine->Stop();
    if (!tsfn_released_ && !shared_->tsfn_finalized) tsfn_.Release();
    tsfn_released_ = true;
  }

  // Runs on the JS thread for each group-commit cycle. Raw, checked N-API calls: this
  // can run while a worker env is terminating, when every call may fail.
  void Deliver(napi_env env, napi_value fn, const std::vector<Completion>& done) {
    const size_t n = done.size();
    pending_ -= n;
    if (pending_ == 0 && referenced_) {
      referenced_ = false;
      napi_unref_threadsafe_function(env, tsfn_);
      uint32_t rc;
      napi_reference_unref(env, Napi::ObjectWrap<EngineWrap>::_ref, &rc);
    }
    void* p;
    napi_value argv[4];
    if (!RawTypedArray(env, napi_float64_array, n, 8, &p, &argv[0])) return;
    auto* ids = static_cast<double*>(p);
    if (!RawTypedArray(env, napi_int32_array, n, 4, &p, &argv[1])) return;
    auto* codes = static_cast<int32_t*>(p);
    if (!RawTypedArray(env, napi_float64_array, n, 8, &p, &argv[2])) return;
    auto* bases = static_cast<double*>(p);
    if (napi_get_null(env, &argv[3]) != napi_ok) return;
    bool have_errors = false;
    for (size_t i = 0; i < n; i++) {
      ids[i] = static_cast<double>(done[i].id);
      codes[i] = static_cast<int32_t>(done[i].code);
      bases[i] = static_cast<double>(done[i].base_offset);
      if (done[i].code == Code::kOk) continue;
      if (!have_errors) {
        if (napi_create_array_with_length(env, n, &argv[3]) != napi_ok) return;
        have_errors = true;
      }
      napi_value err, code, msg;
      if (napi_create_object(env, &err) != napi_ok || napi_create_string_utf8(env, CodeName(done[i].code), NAPI_AUTO_LENGTH, &code) != napi_ok ||
          napi_create_string_utf8(env, done[i].message.data(), done[i].message.size(), &msg) != napi_ok ||
          napi_set_named_property(env, err, "code", code) != napi_ok || napi_set_named_property(env, err, "message", msg) != napi_ok ||
          napi_set_element(env, argv[3], static_cast<uint32_t>(i), err) != napi_ok)
        return;
    }
    napi_value global, result;
    if (napi_get_global(env, &global) != napi_ok) return;
    if (napi_call_function(env, global, fn, 4, argv, &result) == napi_pending_exception) {
      // A throw in the JS callback goes to 'uncaughtException', not through the TSFN
      // trampoline (which would abort).
      napi_value exc;
      if (napi_get_and_clear_last_exception(env, &exc) == napi_ok) napi_fatal_exception(env, exc);
    }
  }

  Napi::Value Backend(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), shared_->engine ? shared_->engine->backend_name() : "closed");
  }
  Napi::Value BackendNote(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), shared_->engine ? shared_->engine->backend_note() : "");
  }
  Napi::Value FlushNote(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), shared_->engine ? shared_->engine->flush_note() : "");
  }
  Napi::Value SyncPasses(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), shared_->engine ? static_cast<double>(shared_->engine->sync_passes()) : 0);
  }
  Napi::Value CacheFlushes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), shared_->engine ? static_cast<double>(shared_->engine->cache_flushes()) : 0);
  }
  Napi::Value RetentionRemoveFailures(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), shared_->engine ? static_cast<double>(shared_->engine->retention_remove_failures()) : 0);
  }
  // takeWarnings() → string[]: what the I/O thread's background work (retention) had to
  // say since the last call; empty once closed.
  Napi::Value TakeWarnings(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::vector<std::string> w;
    if (shared_->engine) w = shared_->engine->TakeWarnings();
    Napi::Array out = Napi::Array::New(env, w.size());
    for (size_t i = 0; i < w.size(); i++) out.Set(static_cast<uint32_t>(i), Napi::String::New(env, w[i]));
    return out;
  }
  Napi::Value ZeroAheadBytes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), shared_->engine ? static_cast<double>(shared_->engine->zero_ahead_bytes()) : 0);
  }
  // writeLatency() and appendLatency() → Float64Array [count, sum in seconds, then per
  // bucket: durations of at most 2^(i+4) µs (not cumulative), the last one the longer
  // ones]; zeros once closed.
  Napi::Value WriteLatency(const Napi::CallbackInfo& info) {
    return Histogram(info.Env(), shared_->engine ? &shared_->engine->write_latency() : nullptr);
  }
  Napi::Value AppendLatency(const Napi::CallbackInfo& info) {
    return Histogram(info.Env(), shared_->engine ? &shared_->engine->append_latency() : nullptr);
  }
  static Napi::Value Histogram(Napi::Env env, const LatencyHistogram* h) {
    constexpr int n = LatencyHistogram::kBuckets + 1;
    Napi::Float64Array out = Napi::Float64Array::New(env, 2 + n);
    if (!h) return out;
    const LatencyHistogram::Snapshot w = h->Read();
    out[0] = static_cast<double>(w.count);
    out[1] = static_cast<double>(w.sum_us) / 1e6;
    for (int i = 0; i < n; i++) out[2 + i] = static_cast<double>(w.counts[i]);
    return out;
  }
  Napi::Value Pending(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(pending_));
  }

  LogEngine* Live(Napi::Env env) {
    if (tsfn_released_ || !shared_->engine) throw MakeError(env, Code::kClosed, "broker is closed");
    return shared_->engine.get();
  }

  // openPartition(dir, label, {segmentBytes, retentionBytes, retentionMs, ...}) → Promise<NativePartition>
  Napi::Value OpenPartition(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Live(env);
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() || !info[2].IsObject())
      ThrowInvalid(env, "openPartition(dir, label, options)");
    Napi::Object o = info[2].As<Napi::Object>();
    PartitionConfig cfg;
    cfg.dir = info[0].As<Napi::String>().Utf8Value();
    cfg.label = info[1].As<Napi::String>().Utf8Value();
    cfg.segment_bytes = static_cast<uint64_t>(GetInt(env, o, "segmentBytes", 128 << 20, 4096, 1 << 30));
    cfg.retention_bytes = GetInt(env, o, "retentionBytes", -1, -1);
    cfg.retention_ms = GetInt(env, o, "retentionMs", -1, -1);
    cfg.index_interval_bytes = static_cast<uint32_t>(GetInt(env, o, "indexIntervalBytes", 4096, 64, 1 << 30));
    cfg.tail_cache_bytes = static_cast<size_t>(GetInt(env, o, "tailCacheBytes", 1 << 20, 0));
    cfg.preallocate_bytes = static_cast<uint64_t>(GetInt(env, o, "preallocateBytes", 16 << 20, 0));
    cfg.min_free_bytes = static_cast<uint64_t>(GetInt(env, o, "minFreeBytes", 64 << 20, 0));
    Napi::Value d = o.Get("directIo");
    cfg.allow_direct = d.IsUndefined() ? true : d.ToBoolean().Value();
    cfg.full_scan = o.Get("fullScan").ToBoolean().Value();
    {
      // Checked as a double before any conversion: a cast of one outside int64's range
      // is undefined. The broker passes the topic's createdAt (ms), a safe integer.
      Napi::Value inc = o.Get("incarnation");
      if (!inc.IsUndefined() && !inc.IsNull()) {
        const double d = inc.IsNumber() ? inc.As<Napi::Number>().DoubleValue() : -1;
        if (!(d >= 0 && d <= 9007199254740991.0) || d != static_cast<double>(static_cast<uint64_t>(d)))
          ThrowInvalid(env, "incarnation must be an integer between 0 and 2^53 - 1");
        cfg.incarnation = static_cast<uint64_t>(d);
      }
    }
    if (cfg.segment_bytes < 4096 || cfg.segment_bytes > (1ull << 30))
      ThrowInvalid(env, "segmentBytes must be between 4096 and 1 GiB");
    if (cfg.index_interval_bytes < 64) ThrowInvalid(env, "indexIntervalBytes must be >= 64");
    const int64_t scan_bytes = GetInt(env, o, "producerScanBytes", 0);
    const int64_t scan_from = GetInt(env, o, "producerScanFrom", -1);
    const int64_t scan_batches = GetInt(env, o, "producerScanBatches", 65536);
    const int64_t scan_per_producer = GetInt(env, o, "producerScanPerProducer", 64);
    if (scan_bytes < 0 || scan_batches < 0 || scan_per_producer < 0)
      ThrowInvalid(env, "producerScanBytes, producerScanBatches and producerScanPerProducer must be >= 0");
    if (scan_from < -1) ThrowInvalid(env, "producerScanFrom must be an offset, or -1 for none");
    // Registered with the engine as soon as it is open, so its timers (retention,
    // idle memory) run whether or not anything is ever appended to it.
    auto* w = new OpenPartitionWorker(env, std::move(cfg), static_cast<uint64_t>(scan_bytes), scan_from, static_cast<size_t>(scan_batches), static_cast<size_t>(scan_per_producer), info.This().As<Napi::Object>(), id_, [this](const std::shared_ptr<PartitionLog>& log) {
      if (!tsfn_released_ && shared_->engine) {
        shared_->engine->Register(log);
        // Relayed by the broker with the I/O thread's own (Broker.relayNativeWarnings).
        for (std::string& w : log->TakeOpenWarnings()) shared_->engine->AddWarning(std::move(w));
      }
      directory_->Add(log);
    });
    napi_value p = w->Promise();
    w->Queue();
    return Napi::Value(env, p);
  }

  // append(partition, batch, id, seal, sync, resume) → true, or false when the ring is full.
  // Checks the batch frame and queues it; the I/O thread validates it (verifying its
  // CRC, or computing it when `seal`: batches from our own codec), assigns offsets
  // and reports through onComplete. The caller keeps `batch` alive until then.
  Napi::Value Append(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    LogEngine* engine = Live(env);
    if (info.Length() < 4) ThrowInvalid(env, "append(partition, batch, id, seal)");
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowInvalid(env, "batch must be a Buffer or Uint8Array");
    if (!info[2].IsNumber()) ThrowInvalid(env, "id must be a number");
    Napi::Uint8Array buf = info[1].As<Napi::Uint8Array>();
    // The completion hands the id back as a double: only a safe integer comes back as
    // given (and a conversion of a negative, NaN or too large double is undefined).
    const double id_d = info[2].As<Napi::Number>().DoubleValue();
    if (!(id_d >= 0 && id_d <= 9007199254740991.0) || id_d != static_cast<double>(static_cast<uint64_t>(id_d)))
      ThrowInvalid(env, "id must be an integer between 0 and 2^53 - 1");
    const uint64_t id = static_cast<uint64_t>(id_d);
    const bool seal = info[3].ToBoolean().Value();
    PartitionLog* log = pw->log.get();
    if (log->closed.load()) throw MakeError(env, Code::kPartitionClosed, "partition " + log->label() + " is closed (topic deleted?)");
    // The way out as the completion that fenced it says (log_engine.cc): an app often
    // sees this one first (the fencing batch was another producer's), and a fence for
    // ENOSPC does not lift when space is freed, as a refusal for space does.
    if (log->failed.load())
      throw MakeError(env, Code::kIoError, "partition " + log->label() + " is fenced after an I/O error (reopen the broker to recover): " +
                                               log->FailureMessage());
    if (buf.ByteLength() > max_batch_bytes_)
      throw MakeError(env, Code::kRecordTooLarge, "batch of " + std::to_string(buf.ByteLength()) + " bytes for " + log->label() +
                                                    " exceeds maxBatchBytes " + std::to_string(max_batch_bytes_));
    const bool sync = info.Length() > 4 && info[4].ToBoolean().Value();
    const bool resume = info.Length() > 5 && info[5].ToBoolean().Value();
    // An empty batch with `sync` writes nothing: its cycle's sync pass makes everything
    // written before it durable (a `sync` retry answered as a duplicate waits for it).
    // One with `resume` ends the partition's refusal for space (IoRequest::resume).
    const bool barrier = buf.ByteLength() == 0 && (sync || resume);
    BatchHeader h;
    if (!barrier && (!PeekHeader(buf.Data(), buf.ByteLength(), &h) || h.length != buf.ByteLength()))
      throw MakeError(env, Code::kCorruptBatch, "corrupt record batch for " + log->label() +
                                                    ": bad magic, version or batchLength (" + std::to_string(buf.ByteLength()) + " bytes given)");
    IoRequest r;
    r.kind = IoRequest::Kind::kAppend;
    r.id = id;
    r.data = buf.Data();
    r.len = buf.ByteLength();
    r.mode = seal ? CrcMode::kSeal : CrcMode::kVerify;
    r.sync = sync;
    r.resume = resume;
    r.partition = pw->log;
    if (!engine->Submit(std::move(r))) return Napi::Boolean::New(env, false);
    if (pending_++ == 0 && !referenced_) {
      referenced_ = true;
      napi_ref_threadsafe_function(env, tsfn_);
      Ref();  // keep this object (and its engine) alive while the I/O thread works
    }
    return Napi::Boolean::New(env, true);
  }

  struct ReadArgs {
    PartitionWrap* partition;
    int64_t offset;
    size_t max_bytes;
  };

  // (partition, offset, maxBytes) of read() and readCached(), checked.
  ReadArgs ParseReadArgs(const Napi::CallbackInfo& info, const char* usage) {
    Napi::Env env = info.Env();
    Live(env);
    if (info.Length() < 3 || !info[1].IsNumber() || !info[2].IsNumber()) ThrowInvalid(env, usage);
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    double off = info[1].As<Napi::Number>().DoubleValue();
    double max = info[2].As<Napi::Number>().DoubleValue();
    if (!(off >= 0) || off != static_cast<double>(static_cast<int64_t>(off)) || off > 9007199254740991.0)
      ThrowInvalid(env, "offset must be a non-negative safe integer");
    if (!(max >= 1) || max > (1u << 30)) ThrowInvalid(env, "maxBytes must be between 1 and 1 GiB");
    return {pw, static_cast<int64_t>(off), static_cast<size_t>(max)};
  }

  Napi::Value Read(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ReadArgs a = ParseReadArgs(info, "read(partition, offset, maxBytes)");
    auto* w = new ReadWorker(env, a.partition->log, a.offset, a.max_bytes);
    napi_value p = w->Promise();
    w->Queue();
    return Napi::Value(env, p);
  }

  // readCached(partition, offset, maxBytes) → Buffer, or undefined when the tail cache
  // does not hold `offset`. Synchronous: a memcpy under a mutex, no pool round trip,
  // for consumers following the end of the log.
  Napi::Value ReadCached(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ReadArgs a = ParseReadArgs(info, "readCached(partition, offset, maxBytes)");
    auto vec = std::make_unique<std::vector<uint8_t>>();
    if (!a.partition->log->TryReadCached(a.offset, a.max_bytes, vec.get()) || vec->empty()) return env.Undefined();
    auto* v = vec.release();
    return Napi::Buffer<uint8_t>::New(env, v->data(), v->size(), [](Napi::Env, uint8_t*, std::vector<uint8_t>* p) { delete p; }, v);
  }

  // The destination of readInto() and readCachedInto(), and its bytes now. A detached
  // one (its ArrayBuffer transferred) is refused: it has no memory to read into.
  static Napi::Buffer<uint8_t> DestArg(const Napi::CallbackInfo& info, const char* usage, uint8_t** data, size_t* len) {
    if (info.Length() < 4) ThrowInvalid(info.Env(), usage);
    // Not IsBuffer(): Node's napi_is_buffer takes any ArrayBufferView, and the Buffer
    // made below of a DataView threw a plain Error ("Invalid argument", no code). As
    // append() takes its batch: a Buffer or another Uint8Array.
    if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      ThrowInvalid(info.Env(), std::string(usage) + ": dest must be a Buffer or Uint8Array");
    if (!ViewBytes(info.Env(), info[3], data, len))
      ThrowInvalid(info.Env(), std::string(usage) + ": dest is detached (its ArrayBuffer was transferred)");
    return info[3].As<Napi::Buffer<uint8_t>>();
  }

  // readInto(partition, offset, maxBytes, dest) → Promise<number | Buffer>: bytes
  // copied into dest, or a new Buffer when the first batch alone is larger than dest.
  Napi::Value ReadInto(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage = "readInto(partition, offset, maxBytes, dest)";
    ReadArgs a = ParseReadArgs(info, usage);
    uint8_t* data = nullptr;
    size_t len = 0;
    Napi::Buffer<uint8_t> dest = DestArg(info, usage, &data, &len);
    auto* w = new ReadWorker(env, a.partition->log, a.offset, a.max_bytes, &dest, len);
    napi_value p = w->Promise();
    w->Queue();
    return Napi::Value(env, p);
  }

  // readCachedInto(partition, offset, maxBytes, dest) → number | Buffer | undefined:
  // like readCached, into the caller's buffer when the result fits.
  Napi::Value ReadCachedInto(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage = "readCachedInto(partition, offset, maxBytes, dest)";
    ReadArgs a = ParseReadArgs(info, usage);
    uint8_t* data = nullptr;
    size_t len = 0;
    DestArg(info, usage, &data, &len);
    static thread_local std::vector<uint8_t> scratch;  // JS thread: reused, never shrinks past one read
    scratch.clear();
    if (!a.partition->log->TryReadCached(a.offset, a.max_bytes, &scratch) || scratch.empty()) return env.Undefined();
    if (scratch.size() <= len) {
      std::memcpy(data, scratch.data(), scratch.size());
      return Napi::Number::New(env, static_cast<double>(scratch.size()));
    }
    return Napi::Buffer<uint8_t>::Copy(env, scratch.data(), scratch.size());
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    PartitionInfo i = pw->log->Info();
    Napi::Object o = Napi::Object::New(env);
    o.Set("startOffset", static_cast<double>(i.start_offset));
    o.Set("endOffset", static_cast<double>(i.end_offset));
    o.Set("bytes", static_cast<double>(i.bytes));
    o.Set("segments", i.segments);
    o.Set("directIo", i.direct_io);
    o.Set("blockSize", i.block_size);
    o.Set("cachedBytes", static_cast<double>(i.cached_bytes));
    return o;
  }

  // setTailCacheBytes(partition, n): the partition's tail cache held to n bytes from
  // now on (never above its open's tailCacheBytes), trimmed at once.
  Napi::Value SetTailCacheBytes(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    if (info.Length() < 2 || !info[1].IsNumber()) ThrowInvalid(env, "setTailCacheBytes(partition, bytes)");
    const double d = info[1].As<Napi::Number>().DoubleValue();
    if (!(d >= 0 && d <= static_cast<double>(kMaxSafeInteger)) || d != std::trunc(d))
      ThrowInvalid(env, "setTailCacheBytes: bytes must be an integer between 0 and " + std::to_string(kMaxSafeInteger));
    pw->log->SetTailCacheBytes(static_cast<size_t>(d));
    return env.Undefined();
  }

  // offsets(partition, out: Float64Array(2)): [startOffset, endOffset] into `out`.
  // Delivery loops call this on every look for new data; info() builds an object
  // with six named properties (~6% of a server's main thread at 10k msgs/s).
  Napi::Value Offsets(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    if (info.Length() < 2 || !info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array ||
        info[1].As<Napi::Float64Array>().ElementLength() < 2)
      ThrowInvalid(env, "offsets(partition, Float64Array of length >= 2)");
    int64_t start = 0, end = 0;
    pw->log->Offsets(&start, &end);
    Napi::Float64Array out = info[1].As<Napi::Float64Array>();
    out[0] = static_cast<double>(start);
    out[1] = static_cast<double>(end);
    return env.Undefined();
  }

  // takeProducerBatches(partition) → { batches: Float64Array of [producerId,
  // baseSequence, recordCount, baseOffset] per batch, oldest first; error?: string
  // when the scan met a bad batch or an unreadable file }. Empty after the first call.
  Napi::Value TakeProducerBatches(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    std::vector<ProducerBatch> v;
    v.swap(pw->producer_batches);
    std::string error;
    error.swap(pw->producer_scan_error);
    Napi::Float64Array out = Napi::Float64Array::New(env, v.size() * 4);
    for (size_t i = 0; i < v.size(); i++) {
      // The JS codec reads an int64 field as a double too (src/codec/record_batch.ts).
      out[4 * i] = static_cast<double>(v[i].producer_id);
      out[4 * i + 1] = v[i].base_sequence;
      out[4 * i + 2] = v[i].record_count;
      out[4 * i + 3] = static_cast<double>(v[i].base_offset);
    }
    Napi::Object r = Napi::Object::New(env);
    r.Set("batches", out);
    if (!error.empty()) r.Set("error", error);
    return r;
  }

  // The caller has waited for the partition's pending appends.
  Napi::Value ClosePartition(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    PartitionWrap* pw = UnwrapPartition(env, info[0], id_);
    if (shared_->engine) shared_->engine->Unregister(pw->log.get());
    directory_->Remove(pw->log.get());
    pw->log->closed.store(true);
    // Let go now rather than when the GC collects this wrapper: the log holds the
    // (deleted) segment files open. Requests in flight hold their own reference;
    // later calls with this wrapper get "partition is not open".
    pw->log.reset();
    publish_signal_->Notify();  // long-polls on it answer now, not at their deadline
    return env.Undefined();
  }

  // Stops the I/O thread after it has processed everything submitted. The caller
  // has waited for pending appends, so this does not block on the disk for long.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    Shutdown();
    directory_->Clear();
    // With completions still queued on the TSFN (delivered after its release), this
    // object must outlive them: Deliver drops the reference when the last arrives.
    // Dropped here, a GC before they run freed it under them.
    if (referenced_ && pending_ == 0) {
      referenced_ = false;
      Unref();
    }
    return info.Env().Undefined();
  }

  Shared* shared_ = nullptr;
  // Names this engine to the partitions it opens (PartitionWrap::engine_id); never reused.
  const uint64_t id_ = [] {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }();
  // Before the engine: the I/O thread's sink captures the signal.
  std::shared_ptr<PartitionDirectory> directory_ = std::make_shared<PartitionDirectory>();
  std::shared_ptr<PublishSignal> publish_signal_ = std::make_shared<PublishSignal>();
  Napi::ThreadSafeFunction tsfn_;
  bool tsfn_released_ = false;
  size_t pending_ = 0;
  bool referenced_ = false;
  size_t max_batch_bytes_ = 16 << 20;
};

// ---------------------------------------------------------------------------------
// The native fetch plane (native/fetch). new NativeFetchServer(engine, options)
// binds and starts the fetch thread; close() stops it. Owned by the JS thread.
class FetchServerWrap : public Napi::ObjectWrap<FetchServerWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeFetchServer",
                       {
                           InstanceAccessor<&FetchServerWrap::Port>("port"),
                           InstanceAccessor<&FetchServerWrap::Backend>("backend"),
                           InstanceAccessor<&FetchServerWrap::BackendNote>("backendNote"),
                           InstanceMethod<&FetchServerWrap::Stats>("stats"),
                           InstanceAccessor<&FetchServerWrap::LastReadError>("lastReadError"),
                           InstanceMethod<&FetchServerWrap::Close>("close"),
                       });
  }

  explicit FetchServerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FetchServerWrap>(info) {
    Napi::Env env = info.Env();
    auto* data = env.GetInstanceData<AddonData>();
    if (info.Length() < 2 || !info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(data->engine_ctor.Value()) ||
        !info[1].IsObject())
      ThrowInvalid(env, "NativeFetchServer(engine, options)");
    EngineWrap* engine = EngineWrap::Unwrap(info[0].As<Napi::Object>());
    Napi::Object o = info[1].As<Napi::Object>();
    FetchServerOptions opts;
    Napi::Value host = o.Get("host");
    if (!host.IsUndefined()) {
      if (!host.IsString()) ThrowInvalid(env, "host must be a string");
      opts.host = host.As<Napi::String>().Utf8Value();
    }
    int64_t port = GetInt(env, o, "port", 0);
    if (port < 0 || port > 65535) ThrowInvalid(env, "port must be between 0 and 65535");
    opts.port = static_cast<int>(port);
    std::string backend = o.Has("backend") ? o.Get("backend").ToString().Utf8Value() : "auto";
    if (backend == "auto") opts.backend = BackendChoice::kAuto;
    else if (backend == "io_uring") opts.backend = BackendChoice::kIoUring;
    else if (backend == "thread") opts.backend = BackendChoice::kThread;
    else ThrowInvalid(env, "backend must be 'auto', 'io_uring' or 'thread', got '" + backend + "'");
    Napi::Value token = o.Get("token");
    if (!token.IsUndefined() && !token.IsNull()) {
      if (!token.IsString()) ThrowInvalid(env, "token must be a string");
      opts.token = token.As<Napi::String>().Utf8Value();
      if (opts.token.size() > 256) ThrowInvalid(env, "token must be at most 256 bytes");
    }
    auto u32 = [&](const char* key, uint32_t dflt, uint32_t lo, uint32_t hi) {
      int64_t v = GetInt(env, o, key, dflt);
      if (v < lo || v > hi) ThrowInvalid(env, std::string(key) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
      return static_cast<uint32_t>(v);
    };
    opts.max_connections = u32("maxConnections", opts.max_connections, 1, 1u << 20);
    opts.handshake_timeout_ms = u32("handshakeTimeoutMs", opts.handshake_timeout_ms, 1, 3'600'000);
    opts.idle_timeout_ms = u32("idleTimeoutMs", opts.idle_timeout_ms, 1, 86'400'000);
    opts.send_timeout_ms = u32("sendTimeoutMs", opts.send_timeout_ms, 1, 3'600'000);
    opts.max_fetch_bytes = u32("maxFetchBytes", opts.max_fetch_bytes, 1, 1u << 30);
    opts.max_wait_ms = u32("maxWaitMs", opts.max_wait_ms, 0, 3'600'000);
    opts.memory_per_connection = static_cast<uint64_t>(GetInt(env, o, "memoryPerConnection", static_cast<int64_t>(opts.memory_per_connection), 0, int64_t{1} << 40));
    opts.memory_total = static_cast<uint64_t>(GetInt(env, o, "memoryTotal", static_cast<int64_t>(opts.memory_total), 0, int64_t{1} << 40));
    Status s = FetchServer::Start(opts, engine->directory(), engine->publish_signal(), &server_);
    if (!s.ok()) throw MakeError(env, s);
  }

  ~FetchServerWrap() override {
    if (server_) server_->Stop();  // a server dropped without close(): stop its thread
  }

 private:
  Napi::Value Port(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), server_ ? server_->port() : 0); }
  Napi::Value Backend(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), server_ ? server_->backend_name() : "closed");
  }
  Napi::Value BackendNote(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), server_ ? server_->backend_note() : "");
  }
  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Object o = Napi::Object::New(info.Env());
    if (!server_) return o;
    const FetchCounters& k = server_->counters();
    o.Set("connections", static_cast<double>(k.connections.load()));
    o.Set("accepted", static_cast<double>(k.accepted.load()));
    o.Set("refused", static_cast<double>(k.refused.load()));
    o.Set("lingering", static_cast<double>(k.lingering.load()));
    o.Set("requests", static_cast<double>(k.requests.load()));
    o.Set("badRequests", static_cast<double>(k.bad_requests.load()));
    o.Set("timeouts", static_cast<double>(k.timeouts.load()));
    o.Set("bytesSpliced", static_cast<double>(k.bytes_spliced.load()));
    o.Set("bytesCopied", static_cast<double>(k.bytes_copied.load()));
    o.Set("parked", static_cast<double>(k.parked.load()));
    o.Set("readErrors", static_cast<double>(k.read_errors.load()));
    return o;
  }
  Napi::Value LastReadError(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), server_ ? server_->last_read_error() : "");
  }
  // Stops the fetch thread: every connection is closed. Blocks for as long as the
  // kernel takes to finish what it has in flight (microseconds, normally).
  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (server_) server_->Stop();
    server_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<FetchServer> server_;
};

// Benchmark helpers (bench/fetch.ts): run on the libuv pool, resolve with
// { bytes, records, requests, seconds } or reject with the error.
class BenchWorker : public Napi::AsyncWorker {
 public:
  BenchWorker(Napi::Env env, std::function<BenchResult()> fn)
      : Napi::AsyncWorker(env, "uringmq.bench"), fn_(std::move(fn)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override { r_ = fn_(); }
  void OnOK() override {
    Napi::Env env = Env();
    if (!r_.error.empty()) {
      deferred_.Reject(MakeError(env, Code::kIoError, r_.error).Value());
      return;
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("bytes", static_cast<double>(r_.bytes));
    o.Set("records", static_cast<double>(r_.records));
    o.Set("requests", static_cast<double>(r_.requests));
    o.Set("seconds", r_.seconds);
    deferred_.Resolve(o);
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  std::function<BenchResult()> fn_;
  Napi::Promise::Deferred deferred_;
  BenchResult r_;
};

// benchSendfile(path, dataBytes, seconds) → Promise<{ bytes, seconds }>
Napi::Value BenchSendfileJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber())
    ThrowInvalid(env, "benchSendfile(path, dataBytes, seconds)");
  std::string path = info[0].As<Napi::String>().Utf8Value();
  uint64_t bytes = static_cast<uint64_t>(info[1].As<Napi::Number>().DoubleValue());
  double seconds = info[2].As<Napi::Number>().DoubleValue();
  if (bytes == 0 || !(seconds > 0)) ThrowInvalid(env, "dataBytes and seconds must be positive");
  auto* w = new BenchWorker(env, [path, bytes, seconds] { return SendfileCeiling(path, bytes, seconds); });
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

// benchFetchDrain({ host, port, token, topic, partition, fromOffset, maxBytes, seconds })
Napi::Value BenchFetchDrainJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) ThrowInvalid(env, "benchFetchDrain(options)");
  Napi::Object o = info[0].As<Napi::Object>();
  FetchDrainOptions d;
  d.host = o.Has("host") ? o.Get("host").ToString().Utf8Value() : "127.0.0.1";
  d.port = static_cast<int>(GetInt(env, o, "port", 0, 0, 65535));
  d.token = o.Has("token") && o.Get("token").IsString() ? o.Get("token").ToString().Utf8Value() : "";
  if (!o.Get("topic").IsString()) ThrowInvalid(env, "topic must be a string");
  d.topic = o.Get("topic").ToString().Utf8Value();
  if (d.topic.empty() || d.topic.size() > fetchproto::kMaxTopicBytes) ThrowInvalid(env, "topic must be 1..249 bytes");
  d.partition = static_cast<uint32_t>(GetInt(env, o, "partition", 0, 0, 0xffffffffLL));
  d.from_offset = GetInt(env, o, "fromOffset", 0, 0);
  d.max_bytes = static_cast<uint32_t>(GetInt(env, o, "maxBytes", 1 << 20, 0, 0xffffffffLL));
  Napi::Value sec = o.Get("seconds");
  d.seconds = sec.IsNumber() ? sec.As<Napi::Number>().DoubleValue() : 3;
  auto* w = new BenchWorker(env, [d] { return FetchDrain(d); });
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

// ---------------------------------------------------------------------------------
class DirLockWrap : public Napi::ObjectWrap<DirLockWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeDirLock", {InstanceMethod<&DirLockWrap::Release>("release")});
  }
  explicit DirLockWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DirLockWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) ThrowInvalid(env, "NativeDirLock(dir)");
    Status s = DirLock::Acquire(info[0].As<Napi::String>().Utf8Value(), &lock_);
    if (!s.ok()) throw MakeError(env, s);
  }
  Napi::Value Release(const Napi::CallbackInfo& info) {
    lock_.Release();
    return info.Env().Undefined();
  }

 private:
  DirLock lock_;
};


// ---------------------------------------------------------------------------------
// Owned by the JS thread that created it: a periodic CLOCK_MONOTONIC timerfd polled by
// that thread's own libuv loop, for benchmarks' open-loop senders, which wake once per
// due message. Why not the alternatives: Node's timers have 1 ms resolution; a JS
// worker that slept with Atomics.wait and posted per wake-up cost ~25% of a core at
// 10k/s on the 2-core machine; and a native thread blocked on the timerfd that posted
// through a thread-safe function (this class until 2026-12-01) added a thread and a
// cross-thread wake-up per message, which `perf sched` showed waiting for a CPU
// behind the broker's own threads (bench:grpc's sender column read 8-10 us per message
// at 10k/s). The loop wakes on the timerfd itself, as on any socket. libuv's headers
// come with Node's (node-gyp and cmake-js both put them on the include path).
class TickerWrap : public Napi::ObjectWrap<TickerWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeTicker",
                       {InstanceMethod<&TickerWrap::Start>("start"), InstanceMethod<&TickerWrap::Stop>("stop")});
  }
  // new NativeTicker(callback): callback() runs on the JS thread after each expiry;
  // expirations while the loop was busy coalesce into one call.
  explicit TickerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TickerWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsFunction()) ThrowInvalid(env, "NativeTicker(callback)");
    callback_ = Napi::Persistent(info[0].As<Napi::Function>());
  }
  ~TickerWrap() override { Close(); }

  // start(firstNs, periodNs): first expiry at CLOCK_MONOTONIC time firstNs (the
  // clock of process.hrtime), then every periodNs.
  Napi::Value Start(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) ThrowInvalid(env, "start(firstNs, periodNs)");
    double first = info[0].As<Napi::Number>().DoubleValue();
    double period = info[1].As<Napi::Number>().DoubleValue();
    if (!(first > 0) || !(period >= 1000) || period > 1e12) ThrowInvalid(env, "start: firstNs must be > 0 and periodNs in [1000, 1e12]");
    if (poll_) ThrowInvalid(env, "NativeTicker already started");
    if (callback_.IsEmpty()) ThrowInvalid(env, "NativeTicker was stopped: create a new one");
    uv_loop_t* loop = nullptr;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) throw MakeError(env, Code::kIoError, "NativeTicker start: no event loop");
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) throw MakeError(env, Code::kIoError, std::string("timerfd_create: ") + std::strerror(errno));
    itimerspec spec{Timespec(period), Timespec(first)};
    if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
      int e = errno;
      ::close(fd);
      throw MakeError(env, Code::kIoError, std::string("timerfd_settime: ") + std::strerror(e));
    }
    auto* poll = new Poll{};
    poll->fd = fd;
    poll->owner = this;
    poll->handle.data = poll;
    int r = uv_poll_init(loop, &poll->handle, fd);
    if (r != 0) {  // not registered with the loop: nothing to close there
      ::close(fd);
      delete poll;
      throw MakeError(env, Code::kIoError, std::string("NativeTicker start: uv_poll_init: ") + uv_strerror(r));
    }
    r = uv_poll_start(&poll->handle, UV_READABLE, &TickerWrap::OnReadable);
    if (r != 0) {
      CloseHandle(poll);
      throw MakeError(env, Code::kIoError, std::string("NativeTicker start: uv_poll_start: ") + uv_strerror(r));
    }
    if (napi_add_async_cleanup_hook(env, &TickerWrap::OnTeardown, poll, &poll->hook) != napi_ok) {
      CloseHandle(poll);
      throw MakeError(env, Code::kIoError, "NativeTicker start: napi_add_async_cleanup_hook failed");
    }
    poll_ = poll;
    context_ = std::make_unique<Napi::AsyncContext>(env, "uringmq-ticker");
    Ref();  // while it ticks, the ticker lives even if JS drops it
    return env.Undefined();
  }

  Napi::Value Stop(const Napi::CallbackInfo& info) {
    Close();
    return info.Env().Undefined();
  }

 private:
  // The poll handle and its fd outlive the ticker until libuv's close callback; an
  // environment torn down while it ticks (a worker's exit) waits for that callback.
  struct Poll {
    uv_poll_t handle;
    int fd = -1;
    TickerWrap* owner = nullptr;
    bool closing = false;
    napi_async_cleanup_hook_handle hook = nullptr;
  };

  static timespec Timespec(double ns) {
    timespec t;
    t.tv_sec = static_cast<time_t>(ns / 1e9);
    t.tv_nsec = static_cast<long>(ns - static_cast<double>(t.tv_sec) * 1e9);
    return t;
  }

  static void CloseHandle(Poll* poll) {
    poll->owner = nullptr;
    if (poll->closing) return;
    poll->closing = true;
    uv_poll_stop(&poll->handle);
    uv_close(reinterpret_cast<uv_handle_t*>(&poll->handle), [](uv_handle_t* h) {
      auto* p = static_cast<Poll*>(h->data);
      if (p->hook) napi_remove_async_cleanup_hook(p->hook);
      if (p->fd >= 0) ::close(p->fd);
      delete p;
    });
  }

  static void OnTeardown(napi_async_cleanup_hook_handle /*hook*/, void* arg) {
    auto* poll = static_cast<Poll*>(arg);
    if (poll->owner) poll->owner->poll_ = nullptr;
    CloseHandle(poll);
  }

  static void OnReadable(uv_poll_t* h, int status, int /*events*/) {
    auto* poll = static_cast<Poll*>(h->data);
    TickerWrap* self = poll->owner;
    if (self == nullptr || self->callback_.IsEmpty()) return;
    std::string error;
    if (status < 0) {
      error = std::string("NativeTicker: poll timerfd: ") + uv_strerror(status);
    } else {
      uint64_t expirations;
      ssize_t n = ::read(poll->fd, &expirations, sizeof expirations);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;  // woken for nothing: wait for the next expiry
      if (n != static_cast<ssize_t>(sizeof expirations)) error = std::string("NativeTicker: read timerfd: ") + std::strerror(n < 0 ? errno : EIO);
    }
    Napi::Env env = self->Env();
    Napi::HandleScope scope(env);
    Napi::Object keep = self->Value();  // a stop() inside the callback must not let it be collected mid-call
    Napi::Function fn = self->callback_.Value();
    std::vector<napi_value> args;
    if (!error.empty()) {
      args.push_back(MakeError(env, Code::kIoError, error).Value());
      self->Close();  // an error stops the ticker; the callback gets it
    }
    try {
      // MakeCallback, as for any I/O callback: async hooks, then nextTicks and microtasks.
      fn.MakeCallback(env.Global(), args, *self->context_);
    } catch (const Napi::Error& e) {
      // A throw in the JS callback goes to 'uncaughtException', as from any I/O callback.
      napi_fatal_exception(env, e.Value());
    }
    (void)keep;
  }

  // Also drops the callback: its closure usually holds this ticker's JS object, and a
  // strong reference from here would keep both alive for good. Idempotent. The async
  // context stays until the ticker goes: a stop() may come from inside the callback.
  void Close() {
    if (!callback_.IsEmpty()) callback_.Reset();
    if (poll_ == nullptr) return;
    CloseHandle(poll_);
    poll_ = nullptr;
    Unref();
  }

  Napi::FunctionReference callback_;
  std::unique_ptr<Napi::AsyncContext> context_;
  Poll* poll_ = nullptr;
};

// ---------------------------------------------------------------------------------
Napi::Value Crc32cJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray()) ThrowInvalid(env, "crc32c(bytes, [crc])");
  // ViewBytes, not ta.ArrayBuffer().Data(): that fails (an Error with no code, IO_ERROR to
  // the caller) for a view of a SharedArrayBuffer, which is no ArrayBuffer to N-API.
  // A detached view has no bytes: the CRC of nothing, as before.
  uint8_t* p = nullptr;
  size_t len = 0;
  if (!ViewBytes(env, info[0], &p, &len)) len = 0;
  uint32_t init = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Uint32Value() : 0;
  return Napi::Number::New(env, Crc32c(len > 0 ? p : nullptr, len, init));
}

// validateBatch(bytes) → {recordCount, ...}; throws CORRUPT_BATCH. For tests and
// servers that want to check a client's batch without appending it.
Napi::Value ValidateBatchJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray()) ThrowInvalid(env, "validateBatch(bytes)");
  Napi::Uint8Array b = info[0].As<Napi::Uint8Array>();
  BatchHeader h;
  Status s = ValidateBatch(b.Data(), b.ByteLength(), CrcMode::kVerify, &h);
  if (!s.ok()) throw MakeError(env, s);
  Napi::Object o = Napi::Object::New(env);
  o.Set("recordCount", h.record_count);
  o.Set("baseOffset", static_cast<double>(h.base_offset));
  return o;
}

// simulatePowerCut(journal, seed) → {writes, lostWrites, sectorsUndone, sectorsKept}: a
// test hook (EngineOptions::test_power_cut). Run only once the process that wrote the
// journal is dead; blocks the calling thread for the undo's few writes and syncs.
Napi::Value SimulatePowerCutJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsNumber()) ThrowInvalid(env, "simulatePowerCut(journal, seed)");
  const double seed = info[1].As<Napi::Number>().DoubleValue();
  if (!(seed >= 0 && seed <= 9007199254740991.0) || seed != std::floor(seed)) ThrowInvalid(env, "seed must be a safe integer >= 0");
  PowerCutResult r;
  Status s = SimulatePowerCut(info[0].As<Napi::String>().Utf8Value(), static_cast<uint64_t>(seed), &r);
  if (!s.ok()) throw MakeError(env, s);
  Napi::Object o = Napi::Object::New(env);
  o.Set("writes", static_cast<double>(r.writes));
  o.Set("lostWrites", static_cast<double>(r.lost_writes));
  o.Set("sectorsUndone", static_cast<double>(r.sectors_undone));
  o.Set("sectorsKept", static_cast<double>(r.sectors_kept));
  return o;
}

Napi::Value ProbeIoUringJs(const Napi::CallbackInfo& info) {
  std::string why;
  bool ok = ProbeIoUring(&why);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("available", ok);
  o.Set("reason", ok ? std::string("io_uring available") : why);
  return o;
}

// fdHungUp(fd) → whether poll() reports `fd` hung up: POLLERR on a pipe whose readers
// are all gone, POLLHUP on a socket whose peer closed or a hung-up terminal. Both come
// without being asked for, and without writing: a pipe's writer otherwise hears of its
// reader's end only from a write's EPIPE (Node offers no poll of its own).
Napi::Value FdHungUpJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) ThrowInvalid(env, "fdHungUp(fd)");
  struct pollfd p = {info[0].As<Napi::Number>().Int32Value(), 0, 0};
  int r;
  do {
    r = ::poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return Napi::Boolean::New(env, r > 0 && (p.revents & (POLLERR | POLLHUP)) != 0);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  Napi::Function partition = PartitionWrap::Init(env);
  data->partition_ctor = Napi::Persistent(partition);
  env.SetInstanceData<AddonData>(data);
  exports.Set("NativePartition", partition);
  Napi::Function engine = EngineWrap::Init(env);
  data->engine_ctor = Napi::Persistent(engine);
  exports.Set("NativeEngine", engine);
  exports.Set("NativeFetchServer", FetchServerWrap::Init(env));
  exports.Set("benchSendfile", Napi::Function::New(env, BenchSendfileJs, "benchSendfile"));
  exports.Set("benchFetchDrain", Napi::Function::New(env, BenchFetchDrainJs, "benchFetchDrain"));
  exports.Set("NativeDirLock", DirLockWrap::Init(env));
  exports.Set("NativeTicker", TickerWrap::Init(env));
  exports.Set("crc32c", Napi::Function::New(env, Crc32cJs, "crc32c"));
  exports.Set("validateBatch", Napi::Function::New(env, ValidateBatchJs, "validateBatch"));
  exports.Set("probeIoUring", Napi::Function::New(env, ProbeIoUringJs, "probeIoUring"));
  exports.Set("simulatePowerCut", Napi::Function::New(env, SimulatePowerCutJs, "simulatePowerCut"));
  exports.Set("fdHungUp", Napi::Function::New(env, FdHungUpJs, "fdHungUp"));
  return exports;
}

}  // namespace
}  // namespace uringmq

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return uringmq::Init(env, exports); }

NODE_API_MODULE(uringmq, InitAddon)

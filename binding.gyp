{
  "targets": [
    {
      "target_name": "uringmq",
      "sources": [
        "native/binding/binding.cc",
        "native/log/crc32c.cc",
        "native/log/record_batch.cc",
        "native/log/file_util.cc",
        "native/log/partition_log.cc",
        "native/log/log_engine.cc",
        "native/log/io_backend.cc",
        "native/log/power_cut.cc",
        "native/log/dir_lock.cc",
        "native/uring/io_uring.cc",
        "native/fetch/fetch_server.cc",
        "native/fetch/fetch_bench.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fno-omit-frame-pointer", "-O2"],
      "ldflags": ["-static-libstdc++", "-static-libgcc"]
    }
  ]
}

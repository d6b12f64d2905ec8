{
  "variables": {
    # libdeflate: "static" (its archive linked in: no libdeflate needed at run time, as the
    # prebuild must), "shared" (-ldeflate) or "none" (zlib inflates); scripts/detect-libdeflate.cjs.
    "libdeflate%": "<!(node scripts/detect-libdeflate.cjs --link)",
    "libdeflate_archive%": "<!(node scripts/detect-libdeflate.cjs --archive)",
    "sanitize%": "<!(node -p \"process.env.PCHECKOUT_SANITIZE === '1' ? 'true' : 'false'\")",
    # The prebuild (scripts/prebuild.cjs) is built at -O2: 25 kB less of the packed tarball, and
    # no difference measured on a fresh checkout of 6,000 files (inflate is libdeflate's, the
    # rest system calls); a build from source keeps node's -O3.
    "prebuild%": "<!(node -p \"process.env.PCHECKOUT_PREBUILD === '1' ? 'true' : 'false'\")"
  },
  "targets": [
    {
      "target_name": "pcheckout",
      "sources": [
        # native/base/
        "native/base/common.cc",
        "native/base/mapped_file.cc",
        "native/base/huge_buffer.cc",
        "native/base/huge_pages.cc",
        "native/base/memory.cc",
        "native/base/thread_slice.cc",
        # native/odb/
        "native/odb/base_cache.cc",
        "native/odb/decode_stats.cc",
        "native/odb/delta.cc",
        "native/odb/inflate.cc",
        "native/odb/loose.cc",
        "native/odb/odb.cc",
        "native/odb/pack.cc",
        "native/odb/pack_index.cc",
        # native/index/
        "native/index/cache_tree.cc",
        "native/index/index_entries.cc",
        "native/index/index_lender.cc",
        "native/index/index_file_writer.cc",
        "native/index/index_writer.cc",
        # native/plan/
        "native/plan/dirs.cc",
        "native/plan/gather.cc",
        "native/plan/path_rules.cc",
        "native/plan/rows.cc",
        "native/plan/tree.cc",
        # native/worktree/
        "native/worktree/beneath.cc",
        "native/worktree/blob_hash.cc",
        "native/worktree/stat.cc",
        "native/worktree/watch.cc",
        "native/worktree/worktree.cc",
        # native/write/
        "native/write/parallel_write.cc",
        "native/write/schedule.cc",
        "native/write/store.cc",
        "native/write/sync.cc",
        "native/write/writer.cc",
        # native/convert/
        "native/convert/convert.cc",
        # native/binding/
        "native/binding/arrays.cc",
        "native/binding/binding.cc",
        "native/binding/convert.cc",
        "native/binding/index.cc",
        "native/binding/odb.cc",
        "native/binding/paths.cc",
        "native/binding/rows.cc",
        "native/binding/watch.cc",
        "native/binding/worktree.cc",
        "native/binding/write.cc"
      ],
      # Sources include each other by their path under native/ ("odb/pack.h").
      "include_dirs": ["native", "<!(node -p \"require('node-addon-api').include_dir\")"],
      # NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: an exception the addon cannot throw into an
      # environment that is shutting down (process.exit() while a worker writes) is dropped,
      # not turned into std::terminate (exit 134).
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_ADDON_API_CPP_EXCEPTIONS_ALL",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      # No -O flag here: the optimization level is the configuration's (node's common.gypi:
      # -O3 for Release, -O0 for Debug; the sanitizer build below asks for -O1).
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      # Hidden visibility and unused sections dropped: the addon exports only its N-API entry
      # (napi_register_module_v1), and the binary (the prebuild, shipped) is smaller.
      "cflags_cc": [
        "-std=c++17", "-fexceptions", "-Wall", "-Wextra",
        "-fvisibility=hidden", "-fvisibility-inlines-hidden", "-ffunction-sections", "-fdata-sections"
      ],
      "ldflags": ["-Wl,--gc-sections"],
      "libraries": ["-lz"],
      "conditions": [
        ["libdeflate=='static'", {
          "defines": ["PCHECKOUT_LIBDEFLATE"],
          "libraries": ["<(libdeflate_archive)"],
          # Its symbols stay inside the addon (not exported, so never another library's).
          "ldflags": ["-Wl,--exclude-libs,libdeflate.a"]
        }],
        ["libdeflate=='shared'", {
          "defines": ["PCHECKOUT_LIBDEFLATE"],
          "libraries": ["-ldeflate"]
        }],
        ["prebuild=='true'", {
          "cflags_cc": ["-O2"]
        }],
        ["sanitize=='true'", {
          "cflags_cc": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    }
  ]
}

{
  "variables": {
    "has_libdeflate%": "<!(node scripts/detect-libdeflate.cjs)",
    "sanitize%": "<!(node -p \"process.env.PCHECKOUT_SANITIZE === '1' ? 'true' : 'false'\")"
  },
  "targets": [
    {
      "target_name": "pcheckout",
      "sources": [
        "native/base_cache.cc",
        "native/beneath.cc",
        "native/binding.cc",
        "native/binding_index.cc",
        "native/binding_rows.cc",
        "native/binding_watch.cc",
        "native/binding_worktree.cc",
        "native/blob_hash.cc",
        "native/cache_tree.cc",
        "native/common.cc",
        "native/convert.cc",
        "native/decode_stats.cc",
        "native/delta.cc",
        "native/dirs.cc",
        "native/gather.cc",
        "native/index_entries.cc",
        "native/index_lender.cc",
        "native/index_writer.cc",
        "native/inflate.cc",
        "native/mapped_file.cc",
        "native/odb.cc",
        "native/pack.cc",
        "native/pack_index.cc",
        "native/parallel_write.cc",
        "native/path_rules.cc",
        "native/rows.cc",
        "native/stat.cc",
        "native/sync.cc",
        "native/tree.cc",
        "native/watch.cc",
        "native/worktree.cc",
        "native/writer.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
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
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra"],
      "libraries": ["-lz"],
      "conditions": [
        ["has_libdeflate=='true'", {
          "defines": ["PCHECKOUT_LIBDEFLATE"],
          "libraries": ["-ldeflate"]
        }],
        ["sanitize=='true'", {
          "cflags_cc": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-O1"],
          "ldflags": ["-fsanitize=address,undefined"]
        }]
      ]
    }
  ]
}

// What the package may ship (package.json "files" and what npm always adds): the bundle and its
// entries, the types, the prebuilds, the addon's sources for the fallback build, the install
// scripts, the --json schema. No source maps, no per-module output of tsc, no fuzz or sanitizer
// scripts, no tests.
export const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^dist\/(lib\.cjs|index\.cjs|index\.js|cli\.cjs)$/,
  /^dist\/types\/.+\.d\.c?ts$/,
  /^prebuilds\/[a-z0-9]+-[a-z0-9+]+\/pcheckout(\.[a-z0-9]+)*\.node$/,
  /^native\/.+\.(cc|h)$/,
  /^binding\.gyp$/,
  /^scripts\/(install|check-build|detect-libdeflate)\.cjs$/,
  /^schema\/summary\.schema\.json$/,
];

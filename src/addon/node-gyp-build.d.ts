// The parts of node-gyp-build (its prebuild matching, the ecosystem's convention for
// prebuilds/<platform>-<arch>/<name>.<tags>.node) that src/addon/prebuild.ts uses.
declare module 'node-gyp-build/node-gyp-build.js' {
  interface Tuple {
    name: string;
    platform: string;
    architectures: string[];
  }
  interface Tags {
    file: string;
    specificity: number;
    napi?: boolean;
    libc?: string;
  }
  interface NodeGypBuild {
    (dir: string): unknown;
    parseTuple(name: string): Tuple | undefined;
    matchTuple(platform: string, arch: string): (t: Tuple | undefined) => t is Tuple;
    compareTuples(a: Tuple, b: Tuple): number;
    parseTags(file: string): Tags | undefined;
    matchTags(runtime: string, abi: string): (t: Tags | undefined) => t is Tags;
    compareTags(runtime: string): (a: Tags, b: Tags) => number;
  }
  const load: NodeGypBuild;
  export default load;
}

/**
 * What filesystem the worktree is on, and whether it is a network one: there every lookup,
 * create and close is a round trip to a server, so more writers in flight pay (git's NFS
 * prototype used 16), and syncfs(2) may not reach the server's disk.
 *
 * The mount table (/proc/self/mountinfo, the mount whose mount point is the longest prefix of the
 * worktree's real path) names the type, with FUSE's subtype (`fuse.sshfs`); statfs's magic
 * number is the fallback where the table cannot be read, and the check that the table's entry is
 * the right one.
 */
import { readFileSync, realpathSync, statfsSync } from 'node:fs';

export interface FilesystemInfo {
  /** The mount table's type (`ext4`, `nfs4`, `fuse.sshfs`, …), else the name of statfs's magic. */
  type: string;
  /** Whether it is reached over a network (NFS, SMB, sshfs, 9p, Ceph, Lustre, …). */
  network: boolean;
  /** The mount's source (`/dev/vda`, `server:/export`, `user@host:dir`), when known. */
  source: string | null;
  /** Where it is mounted, when known. */
  mountPoint: string | null;
  /** statfs's f_type, as a hex string (`0xef53`). */
  magic: string;
}

// Kernel filesystems reached over a network (mount table types, without FUSE's).
const NETWORK_TYPES = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb3',
  'smbfs',
  'ncpfs',
  '9p',
  'ceph',
  'lustre',
  'afs',
  'coda',
  'gpfs',
  'beegfs',
  'orangefs',
  'glusterfs',
  'davfs',
]);

// FUSE subtypes that talk to a server. A local FUSE filesystem (fusefat, fuse-overlayfs,
// bindfs, ntfs-3g) is not a network one.
const NETWORK_FUSE = new Set([
  'sshfs',
  'glusterfs',
  'ceph-fuse',
  's3fs',
  'rclone',
  'gcsfuse',
  'goofys',
  'juicefs',
  'mfs',
  'lizardfs',
  'davfs2',
  'cvmfs2',
  'curlftpfs',
  'smbnetfs',
]);

// statfs magic numbers (linux/magic.h and the filesystems' own headers).
const MAGIC: Record<number, { type: string; network: boolean }> = {
  0xef53: { type: 'ext4', network: false }, // ext2/3/4 share it
  0x58465342: { type: 'xfs', network: false },
  0x9123683e: { type: 'btrfs', network: false },
  0x01021994: { type: 'tmpfs', network: false },
  0x794c7630: { type: 'overlay', network: false },
  0x2fc12fc1: { type: 'zfs', network: false },
  0xf2f52010: { type: 'f2fs', network: false },
  0x65735546: { type: 'fuse', network: false }, // the subtype decides; unknown: not network
  0x6969: { type: 'nfs', network: true },
  0xff534d42: { type: 'cifs', network: true },
  0xfe534d42: { type: 'smb3', network: true },
  0x01021997: { type: '9p', network: true },
  0x00c36400: { type: 'ceph', network: true },
  0x0bd00bd0: { type: 'lustre', network: true },
  0x5346414f: { type: 'afs', network: true },
};

/** Whether a mount table type (`nfs4`, `fuse.sshfs`, `fuseblk`) is a network filesystem. */
export function isNetworkType(type: string): boolean {
  if (type.startsWith('fuse.')) return NETWORK_FUSE.has(type.slice(5));
  return NETWORK_TYPES.has(type) || type.startsWith('nfs');
}

interface Mount {
  mountPoint: string;
  type: string;
  source: string;
}

// Fields are space-separated with spaces, tabs, newlines and backslashes escaped as \ooo.
const unescape = (s: string): string =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** Parses /proc/self/mountinfo (proc(5)): `id parent dev root mountpoint opts [tags] - type source super`. */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (fields.length < 7 || dash < 0 || dash + 2 >= fields.length) continue;
    mounts.push({
      mountPoint: unescape(fields[4]!),
      type: unescape(fields[dash + 1]!),
      source: unescape(fields[dash + 2]!),
    });
  }
  return mounts;
}

/** The mount holding `path` (a real path): the last-mounted of the longest matching prefix. */
export function mountOf(mounts: Mount[], path: string): Mount | undefined {
  let best: Mount | undefined;
  for (const m of mounts) {
    const p = m.mountPoint;
    const under = p === '/' || path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`);
    if (under && (best === undefined || p.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/** Detects the filesystem under `dir` (which must exist). Never throws. */
export function detectFilesystem(dir: string): FilesystemInfo {
  let magic = -1;
  try {
    magic = statfsSync(dir).type;
  } catch {
    /* an exotic platform: the mount table alone decides */
  }
  const byMagic = MAGIC[magic];
  let mount: Mount | undefined;
  try {
    mount = mountOf(
      parseMountinfo(readFileSync('/proc/self/mountinfo', 'latin1')),
      realpathSync(dir),
    );
  } catch {
    /* no /proc: statfs alone decides */
  }
  // The table's entry is trusted unless statfs plainly disagrees (e.g. a mount the table hides).
  const agrees =
    mount !== undefined &&
    (byMagic === undefined ||
      mount.type === byMagic.type ||
      (byMagic.type === 'fuse' && mount.type.startsWith('fuse')) ||
      (byMagic.type === 'ext4' && /^ext[234]$/.test(mount.type)) ||
      (byMagic.type === 'nfs' && mount.type.startsWith('nfs')) ||
      (byMagic.type === 'cifs' && mount.type === 'smb3') ||
      (byMagic.type === 'smb3' && mount.type === 'cifs'));
  const type = agrees ? mount!.type : (byMagic?.type ?? 'unknown');
  return {
    type,
    network: agrees ? isNetworkType(type) : (byMagic?.network ?? false),
    source: agrees ? mount!.source : null,
    mountPoint: agrees ? mount!.mountPoint : null,
    magic: magic < 0 ? 'unknown' : `0x${magic.toString(16)}`,
  };
}

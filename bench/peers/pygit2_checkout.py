"""libgit2 peer (through pygit2): a fresh checkout of HEAD into a clone made with --no-checkout.

    python3 peers/pygit2_checkout.py <dir>           # check out
    python3 peers/pygit2_checkout.py --version       # print pygit2 and libgit2 versions as JSON
"""
import json
import os
import sys

try:
    import pygit2
except ImportError as e:
    sys.stderr.write(f"pygit2 is not installed ({e}): apt-get install python3-pygit2\n")
    sys.exit(3)

if sys.argv[1:] == ["--version"]:
    print(json.dumps({"pygit2": pygit2.__version__, "libgit2": pygit2.LIBGIT2_VERSION}))
    sys.exit(0)

repo = pygit2.Repository(sys.argv[1])
# With no index on disk libgit2 uses an empty baseline, so every entry is created. FORCE is
# what a clone uses; the checkout writes the index itself unless told not to.
repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
if not os.path.exists(os.path.join(repo.path, "index")):
    index = repo.index
    index.read_tree(repo.head.peel(pygit2.Tree))
    index.write()

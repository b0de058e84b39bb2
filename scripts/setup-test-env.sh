#!/usr/bin/env bash
# Installs what the test suite needs and is not an npm devDependency of the
# package itself, or fails loudly. Nothing is ever skipped for lack of it.
#   - redis-server, chromium and PostgreSQL (the tests start their own cluster
#     with initdb/pg_ctl from /usr/lib/postgresql/*/bin), from Debian's packages
#     (needs root or sudo);
#   - the runtimes of the matrix (Deno, Bun, Node 22 and 24), pinned in
#     test/runtimes/package-lock.json and installed from npm.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
[ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup-test-env: installing from Debian: ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup-test-env: ${need_apt[*]} missing and no root/sudo to install them: apt-get install ${need_apt[*]}" >&2; exit 1
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
for tool in redis-server chromium; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup-test-env: $tool is still missing" >&2; exit 1; }
done
[ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || { echo "setup-test-env: PostgreSQL (initdb) is still missing" >&2; exit 1; }

# Installed already when node_modules' own record (.package-lock.json) holds
# every version the lock pins: compared by content, not by mtime, which a
# fresh checkout or a symlinked node_modules makes meaningless.
runtimes_installed() {
  node -e '
    const { existsSync, readFileSync } = require("node:fs");
    const read = (file) => JSON.parse(readFileSync(file, "utf8")).packages;
    const hidden = "test/runtimes/node_modules/.package-lock.json";
    const have = existsSync(hidden) ? read(hidden) : {};
    const stale = Object.entries(read("test/runtimes/package-lock.json")).some(
      ([path, entry]) => path !== "" && !entry.optional && have[path]?.version !== entry.version,
    );
    process.exit(stale ? 1 : 0);
  '
}
runtimes="runtime matrix already installed"
if [ -f test/runtimes/package.json ] && ! runtimes_installed; then
  echo "setup-test-env: installing the runtime matrix (Node 22 and 24, Deno, Bun: npm ci --prefix test/runtimes)"
  npm ci --prefix test/runtimes --no-audit --no-fund --loglevel=error
  runtimes="runtime matrix installed"
fi
echo "setup-test-env: ${runtimes}; redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), $(chromium --version 2>/dev/null | head -1), $("$(pg_bin)/postgres" --version)"

#!/usr/bin/env bash
# Installs what the test suite needs and is not an npm devDependency of the
# package itself, or fails loudly. Nothing is ever skipped for lack of it.
#   - redis-server, chromium and PostgreSQL (the tests start their own cluster
#     with initdb/pg_ctl from /usr/lib/postgresql/*/bin), from Debian's packages
#     (needs root or sudo);
#   - the runtimes of the matrix (Deno, Bun, Node 22 and 24), pinned in
#     test/runtimes/package-lock.json and installed from npm;
#   - size-limit (the size budgets of check:package), pinned in
#     scripts/size-limit/package-lock.json, installed with that Node 22.
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
installed() {
  node -e '
    const { existsSync, readFileSync } = require("node:fs");
    const dir = process.argv[1];
    const read = (file) => JSON.parse(readFileSync(file, "utf8")).packages;
    const hidden = `${dir}/node_modules/.package-lock.json`;
    const have = existsSync(hidden) ? read(hidden) : {};
    const stale = Object.entries(read(`${dir}/package-lock.json`)).some(
      ([path, entry]) => path !== "" && !entry.optional && have[path]?.version !== entry.version,
    );
    process.exit(stale ? 1 : 0);
  ' "$1"
}
tools=""
if ! installed test/runtimes; then
  echo "setup-test-env: installing the runtime matrix (Node 22 and 24, Deno, Bun: npm ci --prefix test/runtimes)"
  npm ci --prefix test/runtimes --no-audit --no-fund --loglevel=error
  tools="runtime matrix installed"
fi
# size-limit needs Node >= 22.19: npm runs under the pinned Node 22, so its
# engines hold and npm has nothing to warn about.
if ! installed scripts/size-limit; then
  echo "setup-test-env: installing size-limit with the pinned Node 22 (npm ci --prefix scripts/size-limit)"
  PATH="$PWD/test/runtimes/node_modules/node22/bin:$PATH" npm ci --prefix scripts/size-limit --no-audit --no-fund --loglevel=warn
  tools="${tools:+$tools, }size-limit installed"
fi
echo "setup-test-env: ${tools:-runtime matrix and size-limit already installed}; redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), $(chromium --version 2>/dev/null | head -1), $("$(pg_bin)/postgres" --version)"

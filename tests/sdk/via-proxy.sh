#!/usr/bin/env bash
# An exec-driver wrapper (harness/drivers/README.md): puts `llmchaos proxy` in front of every route of
# the case with a pass-through script (each route: no step, then ok), points LLMCHAOS_<ROUTE>_BASE_URL
# at the proxy, runs "$@" (the client), stops the proxy and exits with the client's code. The faults
# stay the run's mock provider's own: they must reach the client through the proxy unchanged.
#   LLMCHAOS_BIN        the llmchaos binary (required)
#   PROXY_LOG_DIR       where the proxy's stdout and stderr are appended (default: a temporary folder)
set -euo pipefail
dir=$(mktemp -d)
logs=${PROXY_LOG_DIR:-$dir}
trap 'rm -rf "$dir"' EXIT
script=$dir/proxy.toml
IFS=, read -r -a routes <<<"${LLMCHAOS_ROUTES:-}"
env_name() { printf '%s' "$1" | tr 'a-z' 'A-Z' | tr -c 'A-Z0-9' '_'; }
for r in "${routes[@]}"; do
  n=$(env_name "$r")
  base_var=LLMCHAOS_${n}_BASE_URL dialect_var=LLMCHAOS_${n}_DIALECT
  base=${!base_var} dialect=${!dialect_var}
  printf '[route.%s]\ndialect = "%s"\nupstream = "%s"\nscript = []\n\n' "$r" "$dialect" "${base%/v1}" >>"$script"
done
"$LLMCHAOS_BIN" proxy --script "$script" --port 0 >"$dir/out" 2>>"$logs/proxy.stderr" &
proxy=$!
for _ in $(seq 200); do
  [[ -s $dir/out ]] && break
  sleep 0.02
done
origin=$(head -1 "$dir/out" | sed -n 's/^listening on //p')
[[ -n $origin ]] || { echo "via-proxy: llmchaos proxy did not start" >&2; exit 3; }
for r in "${routes[@]}"; do
  n=$(env_name "$r")
  base_var=LLMCHAOS_${n}_BASE_URL
  suffix=$([[ ${!base_var} == */v1 ]] && echo /v1 || true)
  export "$base_var=$origin/$r$suffix"
done
rc=0
"$@" || rc=$?
kill "$proxy" 2>/dev/null || true
wait "$proxy" 2>/dev/null || true
cat "$dir/out" >>"$logs/proxy.stdout"
exit $rc

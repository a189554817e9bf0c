# Shared by the bench scripts (sourced, not run): tools from Debian, the Release llmchaos, scratch space
# with cleanup, loopback ports, starting llmchaos and nginx. The sourcing script sets `say` and `die`.

# bench_tools CMD=PACKAGE...: installs (apt-get, as root) the packages of the commands missing.
bench_tools() {
  local need=() pair
  for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null || [[ -x /usr/sbin/${pair%%=*} ]] || need+=("${pair#*=}")
  done
  ((${#need[@]})) || return 0
  [[ $(id -u) -eq 0 ]] || die "missing ${need[*]}: apt-get install ${need[*]}"
  say "installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# Sets LLMCHAOS_BIN: the given one, else a Release build in $BENCH_BUILD_DIR (default build-bench).
bench_llmchaos() {
  local root=$1 build=${BENCH_BUILD_DIR:-$1/build-bench}
  if [[ -z ${LLMCHAOS_BIN:-} ]]; then
    say "building llmchaos (Release) in $build"
    bench_build "$root" llmchaos
    LLMCHAOS_BIN=$build/app/llmchaos
    [[ -x $LLMCHAOS_BIN ]] || LLMCHAOS_BIN=$(find "$build" -name llmchaos -type f -perm -u+x | head -1)
  fi
  [[ -x $LLMCHAOS_BIN ]] || die "no llmchaos binary (LLMCHAOS_BIN='$LLMCHAOS_BIN')"
}

# Builds TARGET... (Release) in the bench build directory; bench/ tools are EXCLUDE_FROM_ALL targets.
bench_build() {
  local root=$1 build=${BENCH_BUILD_DIR:-$1/build-bench} launcher=()
  shift
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  mkdir -p "$build"
  # A build directory configured before bench/ had tools of its own (LLMCHAOS_BUILD_BENCH=OFF) is turned on.
  if grep -q '^LLMCHAOS_BUILD_BENCH:BOOL=OFF' "$build/CMakeCache.txt" 2>/dev/null; then
    cmake -S "$root" -B "$build" -DLLMCHAOS_BUILD_BENCH=ON >"$build/bench-build.log" 2>&1 ||
      { tail -n 30 "$build/bench-build.log" >&2; die "configuring $build failed"; }
  fi
  BUILD_DIR=$build BUILD_TYPE=Release \
    CMAKE_ARGS="${launcher[*]} -DLLMCHAOS_BUILD_TESTS=OFF -DLLMCHAOS_BUILD_BENCH=ON" \
    "$root/scripts/build" --target "$@" -j 2 >"$build/bench-build.log" 2>&1 ||
    { tail -n 30 "$build/bench-build.log" >&2; die "the Release build failed (full log: $build/bench-build.log)"; }
}

# Sets work (a scratch directory nginx's workers can read) and pids; everything started is stopped
# and the directory removed on exit.
bench_workdir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  chmod 755 "$work"  # nginx workers run as nobody
  pids=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}
bench_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (bounded) until a TCP port accepts connections.
wait_port() {
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# start_llmchaos NAME ARGS...: `llmchaos ARGS... --port 0` in the background (output in $work/NAME.*);
# sets url from its "listening on" line.
start_llmchaos() {
  local name=$1 line
  shift
  "$LLMCHAOS_BIN" "$@" --port 0 >"$work/$name.out" 2>"$work/$name.err" &
  pids+=("$!")
  url=
  for _ in $(seq 300); do
    line=$(head -n 1 "$work/$name.out" 2>/dev/null || true)
    if [[ $line =~ ^listening\ on\ (http://127\.0\.0\.1:[0-9]+)$ ]]; then url=${BASH_REMATCH[1]}; return 0; fi
    sleep 0.1
  done
  die "llmchaos $1 did not start: $(cat "$work/$name.err")"
}

# nginx_conf TEMPLATE KEY=VALUE...: the template with @PREFIX@, @USER@ and every @KEY@ filled in.
nginx_conf() {
  local conf pair user_line="nobody nogroup"
  [[ $(id -u) -eq 0 ]] || user_line=$(id -un)
  conf=$(<"$1")
  shift
  conf=${conf//@PREFIX@/"$work"}
  conf=${conf//@USER@/"$user_line"}
  for pair in "$@"; do conf=${conf//@${pair%%=*}@/"${pair#*=}"}; done
  printf '%s\n' "$conf"
}

# start_nginx CONF PORT [WRAPPER...]: nginx from the written config; sets nginx_pid.
start_nginx() {
  local conf=$1 port=$2 nginx_bin
  shift 2
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
  "$@" "$nginx_bin" -p "$work" -c "$conf" -e "$work/error.log" 2>"$work/nginx.err" &
  nginx_pid=$!
  pids+=("$nginx_pid")
  wait_port "$port" || die "nginx did not start: $(cat "$work/nginx.err" "$work/error.log" 2>/dev/null)"
}

median() { sort -g | awk '{a[NR] = $1} END {if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

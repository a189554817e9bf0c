#!/usr/bin/env bash
# CTest container_checks (label container): the image scripts/image built, checked as a user runs it.
#  1. its config: non-root (65532), ENTRYPOINT /llmchaos, serve on 0.0.0.0:8080, EXPOSE 8080, an exec-form
#     HEALTHCHECK running `llmchaos probe`, and at most 30 MB;
#  2. without a token its default command refuses to start, saying why;
#  3. `serve --script /cases/...` with the catalog mounted read-only: the readiness line first, docker
#     reports it healthy, /__llmchaos/ready open, the admin API 401 without the token, a case judged
#     through the session API with the token (a naive client fails the quota case, a hardened one passes);
#  4. proxy and gateway in the same network namespace become ready; `run` plays the catalog in it;
#  5. the filesystem is read-only but /tmp (as the Helm chart runs it): serve still writes its reports.
set -uo pipefail
root=$1
image=${LLMCHAOS_IMAGE:-llmchaos:dev}
docker info >/dev/null 2>&1 || { echo "SKIP: no Docker daemon answers (docker info failed)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
names=()
gw_config=$(mktemp -d)
cleanup() {
  ((${#names[@]})) && docker rm -f "${names[@]}" >/dev/null 2>&1
  rm -rf "$gw_config"
}
trap cleanup EXIT
tag=llmchaos-check-$$
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

# 1. the image's config
inspect() { docker image inspect -f "$1" "$image"; }
[[ $(inspect '{{.Config.User}}') == 65532:65532 ]] || fail "user is $(inspect '{{.Config.User}}'), not 65532:65532"
[[ $(inspect '{{json .Config.Entrypoint}}') == '["/llmchaos"]' ]] || fail "entrypoint $(inspect '{{json .Config.Entrypoint}}')"
[[ $(inspect '{{json .Config.Cmd}}') == '["serve","--host","0.0.0.0","--port","8080"]' ]] || fail "cmd $(inspect '{{json .Config.Cmd}}')"
grep -q '"8080/tcp"' <<<"$(inspect '{{json .Config.ExposedPorts}}')" || fail "8080 is not exposed"
[[ $(inspect '{{json .Config.Healthcheck.Test}}') == '["CMD","/llmchaos","probe","--quiet","http://127.0.0.1:8080/__llmchaos/ready"]' ]] ||
  fail "healthcheck $(inspect '{{json .Config.Healthcheck.Test}}')"
size=$(inspect '{{.Size}}')
((size <= 30000000)) || fail "the image is $size bytes, over 30 MB"
echo "image $image: user 65532:65532, healthcheck by llmchaos probe, $((size / 1000000)) MB ($size bytes)"

# 2. the default command without a token: refused, with the reason
out=$(docker run --rm "$image" 2>&1)
code=$?
[[ $code == 2 ]] || fail "the default command without a token exited $code, expected 2: $out"
grep -q 'refusing to bind 0.0.0.0' <<<"$out" && grep -q LLMCHAOS_ADMIN_TOKEN <<<"$out" || fail "no clear refusal: $out"
echo "without a token: exit 2, \"$(head -1 <<<"$out")\""

# 3. a case served from the container with the catalog mounted, as the README runs it
serve=$tag-serve
names+=("$serve")
docker run -d --name "$serve" -e LLMCHAOS_ADMIN_TOKEN="$token" -p 127.0.0.1::8080 -p 127.0.0.1::8081 -p 127.0.0.1::8082 \
  -v "$root/cases:/cases:ro" "$image" serve --script /cases/staging/quota-429-falls-back.toml >/dev/null ||
  fail "docker run serve"
for _ in $(seq 1 100); do
  [[ -n $(docker logs "$serve" 2>/dev/null) ]] && break
  sleep 0.2
done
first=$(docker logs "$serve" 2>/dev/null | head -1)
[[ $first == "listening on http://0.0.0.0:8080" ]] || fail "first line: '$first'; logs: $(docker logs "$serve" 2>&1)"
port=$(docker port "$serve" 8080/tcp | head -1 | sed 's/.*://')
base=http://127.0.0.1:$port
health=starting
for _ in $(seq 1 60); do
  health=$(docker inspect -f '{{.State.Health.Status}}' "$serve")
  [[ $health == healthy ]] && break
  sleep 1
done
[[ $health == healthy ]] || fail "docker reports '$health' after 60 s"
echo "serve: '$first', docker reports it healthy, published at $base"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[[ $(code "$base/__llmchaos/ready") == 200 ]] || fail "/__llmchaos/ready is not 200"
[[ $(code "$base/__llmchaos/ledger") == 401 ]] || fail "the ledger without the token is not 401"
[[ $(code -X PUT --data-binary 'x' "$base/__llmchaos/script") == 401 ]] || fail "a script PUT without the token is not 401"
[[ $(code -H "Authorization: Bearer $token" "$base/__llmchaos/ledger") == 200 ]] || fail "the ledger with the token is not 200"
python3 "$root/tests/container/judge_in_container.py" "$base" "$token" "$root" || fail "the session API through the container"
docker exec "$serve" /llmchaos probe --quiet http://127.0.0.1:8080/__llmchaos/ready || fail "probe inside the container"

# 4. proxy and gateway beside it (its network namespace: the mock is their upstream on 127.0.0.1:8080)
proxy=$tag-proxy gateway=$tag-gateway
names+=("$proxy" "$gateway")
sed 's#127.0.0.1:8100#127.0.0.1:8080#' "$root/examples/gateway.toml" >"$gw_config/gateway.toml"
printf '[route.primary]\ndialect = "openai"\n' >"$gw_config/proxy.toml"
chmod -R a+rX "$gw_config"
docker run -d --name "$proxy" --network "container:$serve" -e LLMCHAOS_ADMIN_TOKEN="$token" -v "$gw_config:/config:ro" \
  "$image" proxy --port 8081 --script /config/proxy.toml --upstream http://127.0.0.1:8080/primary >/dev/null ||
  fail "docker run proxy"
docker run -d --name "$gateway" --network "container:$serve" -v "$gw_config:/config:ro" "$image" \
  gateway --config /config/gateway.toml --host 0.0.0.0 --port 8082 --allow-non-loopback >/dev/null || fail "docker run gateway"
for p in 8081 8082; do
  hostport=$(docker port "$serve" $p/tcp | head -1 | sed 's/.*://')
  ok=
  for _ in $(seq 1 50); do
    [[ $(code "http://127.0.0.1:$hostport/__llmchaos/ready") == 200 ]] && { ok=1; break; }
    sleep 0.2
  done
  [[ -n $ok ]] || fail "port $p (proxy 8081, gateway 8082) never ready: $(docker logs "$proxy" 2>&1) $(docker logs "$gateway" 2>&1)"
done
proxied=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' -H 'authorization: Bearer k' \
  -d '{"model":"m","messages":[{"role":"user","content":"hi"}]}' \
  "http://127.0.0.1:$(docker port "$serve" 8081/tcp | head -1 | sed 's/.*://')/primary/v1/chat/completions")
[[ $proxied == 429 ]] || fail "the proxy did not forward the mock's quota 429 (got $proxied)"
echo "proxy (forwarded the mock's 429) and gateway ready in the container"
out=$(docker run --rm "$image" run /cases/staging --virtual-time -q 2>&1) || fail "run in the container: $out"
echo "run in the container: $(grep -E 'passed|failed' <<<"$out" | tail -1)"

# 5. read-only root filesystem, a tmpfs at /tmp (the Helm chart's securityContext)
ro=$tag-ro
names+=("$ro")
docker run -d --name "$ro" --read-only --tmpfs /tmp:uid=65532 --cap-drop ALL --security-opt no-new-privileges \
  -e LLMCHAOS_ADMIN_TOKEN="$token" -p 127.0.0.1::8080 "$image" >/dev/null || fail "docker run --read-only"
ro_base=http://127.0.0.1:$(docker port "$ro" 8080/tcp | head -1 | sed 's/.*://')
for _ in $(seq 1 50); do [[ $(code "$ro_base/__llmchaos/ready") == 200 ]] && break; sleep 0.2; done
[[ $(code -X POST -H "Authorization: Bearer $token" -d '{"dir":"reports"}' "$ro_base/__llmchaos/sessions/reports") == 200 ]] ||
  fail "reports under a read-only root: $(docker logs "$ro" 2>&1)"
docker exec "$ro" /llmchaos probe --quiet http://127.0.0.1:8080/__llmchaos/ready || fail "probe, read-only root"
echo "read-only root, all capabilities dropped: serves, writes its reports to /tmp"
echo "container checks passed"

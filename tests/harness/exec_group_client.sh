#!/bin/sh
# A client program for the exec driver's groups test: the workflow's primary is a model group
# (LLMCHAOS_GROUPS), whose members (LLMCHAOS_GROUP_<NAME>) take turns by their integer weights
# (LLMCHAOS_<ROUTE>_WEIGHT): request n of the case (a counter in LLMCHAOS_STATE_DIR) goes to the member
# whose slot holds n modulo the total weight. One openai call with curl; the contract line names the member
# and carries the answer's text, model and output tokens (read with sed: the mock's JSON is compact).
set -eu
key() { printf '%s' "$1" | tr 'a-z' 'A-Z' | sed 's/[^A-Z0-9]/_/g'; }
case ",${LLMCHAOS_GROUPS:-}," in
  *",$LLMCHAOS_PRIMARY,"*) ;;
  *) echo "exec_group_client: the primary $LLMCHAOS_PRIMARY is not among LLMCHAOS_GROUPS (${LLMCHAOS_GROUPS:-unset})" >&2; exit 3 ;;
esac
members=$(printenv "LLMCHAOS_GROUP_$(key "$LLMCHAOS_PRIMARY")" | tr ',' ' ')
n=$(cat "$LLMCHAOS_STATE_DIR/turn" 2>/dev/null || echo 0)
echo $((n + 1)) > "$LLMCHAOS_STATE_DIR/turn"
total=0
for m in $members; do total=$((total + $(printenv "LLMCHAOS_$(key "$m")_WEIGHT"))); done
slot=$((n % total))
chosen=
for m in $members; do
  w=$(printenv "LLMCHAOS_$(key "$m")_WEIGHT")
  if [ "$slot" -lt "$w" ]; then chosen=$m; break; fi
  slot=$((slot - w))
done
base=$(printenv "LLMCHAOS_$(key "$chosen")_BASE_URL")
answer=$(curl -sf --max-time 5 -H 'content-type: application/json' -H 'authorization: Bearer k' \
  -H "idempotency-key: $LLMCHAOS_OPERATION_ID" \
  -d '{"model": "gpt-mock-mini", "messages": [{"role": "user", "content": "hi"}]}' "$base/chat/completions")
field() { printf '%s' "$answer" | sed -n "s/.*\"$1\": *\"*\([^\",}]*\).*/\1/p"; }
echo "{\"outcome\": \"primary_success\", \"route\": \"$chosen\", \"text\": \"$(field content)\", \"model\": \"$(field model)\", \"output_tokens\": $(field completion_tokens)}"

#!/usr/bin/env bash
# Reference adapter for the Orbtile Adapter Protocol v1: bash + curl, nothing else.
#
# Copy it. It shows one session on the keypad and walks it through every
# activity. It reads the discovery file (ORBTILE_API_FILE, else the default
# path) and backs off while there is none; passes the token to curl through
# `-K <(printf ...)`, so it is never on a command line (`ps` shows argv); opens
# a new connection per call; on 401 reads the file again once and retries; on
# 404 adapter_not_registered registers again and resends the whole session;
# heartbeats at least every 10 s; honours Retry-After on 429 and 503.
# (The Python and Node examples also check the server's nonce proof; doing it
# here would need the token on openssl's command line.)
#
# Usage: ref.sh [--id dev.example.ref-sh] [--step SECONDS] [--allow-timeout SECONDS] [--loops N]
#               [--heartbeat SECONDS]
# Exit 0 after the walk, 2 when not allowed, 3 when the API is off.
set -euo pipefail

ID=dev.example.ref-sh
STEP=2
ALLOW_TIMEOUT=300
LOOPS=1
HEARTBEAT=5
while [ $# -gt 0 ]; do
  case "$1" in
    --id) ID=$2; shift 2 ;;
    --step) STEP=$2; shift 2 ;;
    --allow-timeout) ALLOW_TIMEOUT=$2; shift 2 ;;
    --loops) LOOPS=$2; shift 2 ;;
    --heartbeat) HEARTBEAT=${2%.*}; shift 2 ;;
    *) echo "ref.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done

if [ -n "${ORBTILE_API_FILE:-}" ]; then
  API_FILE=$ORBTILE_API_FILE
elif [ "$(uname)" = Darwin ]; then
  API_FILE="$HOME/Library/Application Support/Orbtile/adapter-api.json"
else
  API_FILE="${ORBIT_CONFIG_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/orbit}/adapter-api.json"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SOCK="" BASE="" TOKEN=""

# A string field of the (flat) discovery file.
field() { sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$API_FILE" | head -n1; }

load() {
  [ -r "$API_FILE" ] || return 1
  SOCK=$(field socketPath)
  BASE=$(field basePath)
  TOKEN=$(field token)
  [ -n "$SOCK" ] && [ -n "$TOKEN" ]
}

# raw METHOD PATH [BODY]: sets STATUS, RETRY_AFTER; the body is in $TMP/body.
raw() {
  local method=$1 path=$2 body=${3-}
  : >"$TMP/body"
  : >"$TMP/headers"
  STATUS=$(curl -sS --unix-socket "$SOCK" -X "$method" \
    -K <(printf 'header = "Authorization: Bearer %s"\n' "$TOKEN") \
    -H 'Host: localhost' -H 'Content-Type: application/json' \
    --data-binary "$body" -D "$TMP/headers" -o "$TMP/body" -w '%{http_code}' \
    "http://localhost${BASE:-/a/v1}${path}" 2>/dev/null) || STATUS=000
  RETRY_AFTER=$(sed -n 's/^[Rr]etry-[Aa]fter:[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/headers" | head -n1)
}

REGISTRATION='{"name":"Reference (shell)","shortName":"Sh","palette":{"baseHue":100,"attentionHue":330},"glyph":{"monogram":"Sh"},"version":"1.0.0","urlSchemes":["https"]}'
SESSION_ID=ref-sh-1
WHOLE=""   # the whole session as last sent, for a resend after re-registering
LAST_CALL=0

register() {
  raw PUT "/adapters/$ID" "$REGISTRATION"
  case "$STATUS" in
    200|201) ;;
    401) load && raw PUT "/adapters/$ID" "$REGISTRATION" ;;
  esac
  ENABLED=false
  grep -q '"enabled"[[:space:]]*:[[:space:]]*true' "$TMP/body" && ENABLED=true
  REASON=$(sed -n 's/.*"reason"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$TMP/body")
}

# call METHOD PATH [BODY]: one call with the protocol's retry rules.
call() {
  local method=$1 path=$2 body=${3-} reread=1 reregister=1 tries=0 off_wait=1
  while [ $tries -lt 12 ]; do
    tries=$((tries + 1))
    raw "$method" "$path" "$body"
    case "$STATUS" in
      2??) LAST_CALL=$(date +%s); return 0 ;;
      429|503) sleep "${RETRY_AFTER:-1}" ;;
      401) [ $reread = 1 ] || break; reread=0; load || return 3 ;;
      404)
        grep -q adapter_not_registered "$TMP/body" && [ $reregister = 1 ] || break
        reregister=0
        register
        # The hub lost the session: send it whole again.
        case "$path" in
          "/adapters/$ID/sessions/$SESSION_ID") body=$WHOLE ;;
          *) [ -n "$WHOLE" ] && raw POST "/adapters/$ID/sessions/$SESSION_ID" "$WHOLE" ;;
        esac
        ;;
      000)
        # Orbit quit or is relaunching: wait (1 s doubling, about 30 s in
        # all), read the file again, retry.
        [ $off_wait -le 16 ] || break
        sleep $off_wait
        off_wait=$((off_wait * 2))
        load || true
        ;;
      *) break ;;
    esac
  done
  echo "ref.sh: $method $path: HTTP $STATUS $(cat "$TMP/body")" >&2
  return 1
}

update() {
  # $1: the changed fields; $2: the whole session after them.
  WHOLE=$2
  call POST "/adapters/$ID/sessions/$SESSION_ID" "$1"
}

# Sleeps $1 seconds, heartbeating after $HEARTBEAT seconds without a call.
sleep_with_heartbeats() {
  local end=$(( $(date +%s) + ${1%.*} ))
  [ "${1%.*}" = 0 ] && { sleep "$1"; return; }
  while [ "$(date +%s)" -lt "$end" ]; do
    if [ $(( $(date +%s) - LAST_CALL )) -ge "${HEARTBEAT:-5}" ]; then call POST "/adapters/$ID/heartbeat"; fi
    sleep 1
  done
}

backoff=1
until load; do
  echo "ref.sh: no discovery file: the adapter API is off or Orbit is not running; retrying in ${backoff} s" >&2
  [ $backoff -ge 30 ] && [ -n "${REF_GIVE_UP:-}" ] && exit 3
  sleep $backoff
  backoff=$(( backoff * 2 > 30 ? 30 : backoff * 2 ))
done

register
deadline=$(( $(date +%s) + ${ALLOW_TIMEOUT%.*} ))
while [ "$ENABLED" != true ]; do
  if [ "$REASON" = disabled_by_user ] || [ "$(date +%s)" -gt $deadline ]; then
    echo "ref.sh: not allowed (${REASON:-?})" >&2
    exit 2
  fi
  sleep 0.5
  register
done
echo "ref.sh: allowed" >&2

TITLE='ref.sh \u202eevil\u202c \u0007bell \ud83d\ude80 r\u00e9sum\u00e9'
LONG=$(printf 'x%.0s' $(seq 1 10000))
MESSAGE="line one\\tTab\\n\\u2067isolate\\u2069 \\ud83d\\udc69\\u200d\\ud83d\\udcbb $LONG the end \\u00e9"
BASE_FIELDS="\"title\":\"$TITLE\",\"cwd\":\"/tmp\",\"model\":\"reference\",\"ttlSeconds\":120,\"openURL\":\"https://example.com/ref-sh\""

update "{$BASE_FIELDS,\"activity\":\"starting\",\"pid\":$$}" "{$BASE_FIELDS,\"activity\":\"starting\",\"pid\":$$}"
n=0
for _ in $(seq 1 "$LOOPS"); do
  for activity in starting thinking tool streaming waitingPermission waitingQuestion compacting done error idle; do
    n=$((n + 1))
    extra='"statusDetail":null'
    case $activity in
      tool) extra='"toolLabel":"Bash  make test","toolKind":"shell","statusDetail":null' ;;
      streaming) extra="\"message\":{\"id\":\"m$n\",\"text\":\"$MESSAGE\"},\"statusDetail\":null" ;;
      waitingPermission|error) extra='"statusDetail":"Bash wants to run \u202emake\u202c"' ;;
      thinking) extra='"message":null,"statusDetail":null' ;;
    esac
    update "{\"activity\":\"$activity\",$extra}" "{$BASE_FIELDS,\"pid\":$$,\"activity\":\"$activity\"}"
    echo "ref.sh: $activity" >&2
    sleep_with_heartbeats "$STEP"
  done
done
call DELETE "/adapters/$ID/sessions/$SESSION_ID"
echo "ref.sh: done" >&2

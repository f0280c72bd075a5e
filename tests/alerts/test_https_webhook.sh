#!/usr/bin/env bash
# https webhooks against a TLS server on loopback (no Slurm needed): a CA made here with the openssl
# command signs the server's certificate for "localhost". notify.ca_file naming that CA is trusted;
# another CA, the system's store, and the right CA for a host or address the certificate does not name are
# refused, each an alert failure told as the outcome (never a crash); plain http still works, and the
# slack format sends one line of text.
# Reads MLSUP_SEND_ALERT (the mlsup_send_alert test binary) and MLSUP_SOURCE_DIR.
set -uo pipefail
source "${MLSUP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
SEND=${MLSUP_SEND_ALERT:?set MLSUP_SEND_ALERT to the mlsup_send_alert binary}

WORK=$(mktemp -d)
SERVERS=()
cleanup() { for p in "${SERVERS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK" || exit 1

# A key and a self-signed CA certificate: make_ca NAME
make_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" -out "$1.pem" \
    -days 1 -subj "/CN=$1" 2>/dev/null
}
make_ca test-ca
make_ca other-ca
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
  -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA test-ca.pem -CAkey test-ca.key -CAcreateserial -out server.pem -days 1 \
  -extfile server.ext 2>/dev/null
# Another server certificate from the same CA, for a name that is not the URL's.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout other.key -out other.csr \
  -subj /CN=elsewhere.invalid 2>/dev/null
printf 'subjectAltName=DNS:elsewhere.invalid\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > other.ext
openssl x509 -req -in other.csr -CA test-ca.pem -CAkey test-ca.key -CAcreateserial -out other.pem -days 1 \
  -extfile other.ext 2>/dev/null
check "the openssl command made a CA and server certificates it signed" test -s server.pem -a -s other.pem

# Starts a receiver: serve MODE NAME [CERT KEY]; sets PORT.
serve() {
  python3 "$REPO/tests/alerts/webhook_server.py" "$1" "$2.port" "$2.bodies" "${@:3}" &
  SERVERS+=($!)
  wait_until 10 test -s "$2.port"
  PORT=$(cat "$2.port")
}
serve tls tls server.pem server.key
TLS_PORT=$PORT
serve plain plain
PLAIN_PORT=$PORT
serve tls elsewhere other.pem other.key
ELSEWHERE_PORT=$PORT

# Sends an event as an alert through a config with the given notify lines: send NAME EVENT NOTIFY...
send() {
  local name=$1 event=$2; shift 2
  mkdir -p "$name"
  { printf 'name: %s\ntemplate: job.sbatch\nnotify:\n  cooldown: 0s\n' "$name"; printf '  %s\n' "$@"; } > "$name/c.yaml"
  printf '#!/bin/bash\nsrun true\n' > "$name/job.sbatch"
  OUTCOME=$(timeout 30 "$SEND" "$name/c.yaml" "$event" 2>&1)
  echo "  $name: $OUTCOME"
}
STOPPED='{"event":"stopped","campaign":"c","reason":"the failed budget is spent","attempt":4}'
bodies() { if [ -f "$1.bodies" ]; then wc -l < "$1.bodies"; else echo 0; fi; }

send trusted "$STOPPED" "webhook: https://localhost:$TLS_PORT/hook" "ca_file: $WORK/test-ca.pem"
check "a server whose certificate the CA file signed is sent to" test "$OUTCOME" = "webhook: sent"
check "it got the event as JSON with its kind and summary" \
  python3 -c 'import json,sys; b=json.loads(open(sys.argv[1]).readline()); assert b["alert_kind"]=="stopped" and b["summary"].startswith("mlsup c: stopped"), b' tls.bodies

send wrong_ca "$STOPPED" "webhook: https://localhost:$TLS_PORT/hook" "ca_file: $WORK/other-ca.pem"
check "a server whose certificate another CA signed is refused" \
  grep -q "^webhook: failed to verify the server's certificate: " <<< "$OUTCOME"
send system_store "$STOPPED" "webhook: https://localhost:$TLS_PORT/hook"
check "without a CA file the system's store is used, which does not trust the test CA" \
  grep -q "^webhook: failed to verify the server's certificate: " <<< "$OUTCOME"
send wrong_host "$STOPPED" "webhook: https://127.0.0.1:$TLS_PORT/hook" "ca_file: $WORK/test-ca.pem"
check "a trusted certificate for another address is refused" \
  grep -q "^webhook: failed to verify the server's certificate: IP address mismatch" <<< "$OUTCOME"
send wrong_name "$STOPPED" "webhook: https://localhost:$ELSEWHERE_PORT/hook" "ca_file: $WORK/test-ca.pem"
check "a trusted certificate for another host name is refused" \
  grep -q "^webhook: failed to verify the server's certificate: hostname mismatch" <<< "$OUTCOME"
send missing_ca "$STOPPED" "webhook: https://localhost:$TLS_PORT/hook" "ca_file: $WORK/none.pem"
check "a CA file that cannot be read is an alert failure" \
  grep -q "^webhook: cannot read notify.ca_file .*none.pem: no such readable file" <<< "$OUTCOME"
check "the refused ones never reached a server (one body only)" test "$(bodies tls)" -eq 1 -a "$(bodies elsewhere)" -eq 0

send plain "$STOPPED" "webhook: http://127.0.0.1:$PLAIN_PORT/hook" "format: slack"
check "plain http still works" test "$OUTCOME" = "webhook: sent"
check "the slack format sends one line of text" \
  python3 -c 'import json,sys; b=json.loads(open(sys.argv[1]).readline()); assert b=={"text":"mlsup c: stopped: the failed budget is spent (attempt 4)"}, b' plain.bodies

send not_chosen '{"event":"hang-detected","campaign":"c"}' "webhook: http://127.0.0.1:$PLAIN_PORT/hook"
check "a kind notify.on does not choose is not sent" test "$OUTCOME" = "not chosen"
send chosen '{"event":"hang-detected","campaign":"c","reason":"silent for 60s"}' \
  "webhook: http://127.0.0.1:$PLAIN_PORT/hook" "on: [hang]"
check "a kind notify.on chooses is sent" test "$OUTCOME" = "webhook: sent"
check "the plain server got two bodies" test "$(bodies plain)" -eq 2
finish

#!/usr/bin/env bash
# Cross-language check: start a broker on a free port, then run the Python example and
# conformance check (examples/python) against it. Needs Debian's python3-grpcio,
# python3-protobuf, protobuf-compiler and protobuf-compiler-grpc; without them it is
# skipped (exit 0) unless URINGMQ_REQUIRE_PYTHON=1.
set -euo pipefail

cd "$(dirname "$0")/.."
PY=/usr/bin/python3  # Debian's, where python3-grpcio is installed

missing=()
if [[ ! -x $PY ]]; then
  missing+=("$PY")
elif ! $PY -c 'import grpc, google.protobuf' 2>/dev/null; then
  missing+=("grpc/protobuf for $PY (apt-get install python3-grpcio python3-protobuf)")
fi
if ! command -v protoc >/dev/null; then
  missing+=("protoc (apt-get install protobuf-compiler)")
elif ! protoc --version | awk '{ split($2, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 15)) }'; then
  missing+=("protoc 3.15 or later for proto3 optional (found: $(protoc --version))")
fi
if ! command -v grpc_python_plugin >/dev/null; then
  missing+=("grpc_python_plugin (apt-get install protobuf-compiler-grpc)")
fi
if ((${#missing[@]})); then
  what=$(IFS=';'; echo "${missing[*]}")
  what=${what//;/; }
  if [[ ${URINGMQ_REQUIRE_PYTHON:-} == 1 ]]; then
    echo "test-python: FAILED: missing $what (URINGMQ_REQUIRE_PYTHON=1)" >&2
    exit 1
  fi
  echo "test-python: skipped: missing $what"
  exit 0
fi

[[ -f dist/src/cli/main.js ]] || npm run -s build

STUBS=$(mktemp -d -t uringmq-pystubs.XXXXXX)
DATA=$(mktemp -d -t uringmq-pydata.XXXXXX)
SERVER_PID=
cleanup() {
  local status=$?
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if ((status != 0)) && [[ -s $DATA.log ]]; then
    echo "--- broker log:" >&2
    tail -n 30 "$DATA.log" >&2
  fi
  rm -rf "$STUBS" "$DATA" "$DATA.log"
  exit "$status"
}
trap cleanup EXIT

protoc -I proto --python_out="$STUBS" --grpc_python_out="$STUBS" \
  --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" proto/uringmq/v1/broker.proto

PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node dist/src/cli/main.js serve --dir "$DATA" --host 127.0.0.1 --port "$PORT" --no-fetch --no-metrics \
  --log-level warn >"$DATA.log" 2>&1 &
SERVER_PID=$!

for i in $(seq 200); do  # up to ~20 s
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "test-python: the broker exited before listening" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  if ((i == 200)); then
    echo "test-python: the broker did not listen on 127.0.0.1:$PORT within 20 s" >&2
    exit 1
  fi
  sleep 0.1
done

export UMQ_STUBS=$STUBS
echo "test-python: broker on 127.0.0.1:$PORT; example.py:"
timeout 60 $PY examples/python/example.py "127.0.0.1:$PORT" 5
echo "test-python: conformance.py:"
timeout 120 $PY examples/python/conformance.py "127.0.0.1:$PORT"

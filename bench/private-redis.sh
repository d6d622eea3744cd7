# Sourced by the bench scripts: a private redis-server with no persistence on the first free
# loopback port in 16380-16480, so that a benchmark never touches the machine's Redis on 6379.
#
#   start_private_redis SCRIPT [CPU]
#
# Sets $port and $redis_pid (the caller stops it: set its trap before calling), pins the server to
# CPU with taskset when one is given, and returns once it answers PING. SCRIPT names the caller in
# errors.
start_private_redis() {
  local script=$1 cpu=${2:-} p
  local pin=()
  port=""
  for p in $(seq 16380 16480); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
  done
  [ -n "$port" ] || { echo "$script: no free port in 16380-16480 for Redis" >&2; exit 1; }
  [ -z "$cpu" ] || pin=(taskset -c "$cpu")
  "${pin[@]}" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize no --loglevel warning >/dev/null &
  redis_pid=$!
  for _ in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  redis-cli -p "$port" ping >/dev/null || { echo "$script: the private Redis on port $port does not answer" >&2; exit 1; }
}

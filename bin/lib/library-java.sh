# Sourced by the command-line tools in bin/: runs a main class of the OnceOnly library with its
# dependencies, from a checkout after `mvn package` (resolved by Maven once per change of the POM)
# or from ONCEONLY_CLASSPATH (the onceonly jar, amqp-client, slf4j-api, microprofile-config-api,
# smallrye-config and its dependencies).
#
#   run_library_main TOOL-NAME MAIN-CLASS ARGS...
run_library_main() {
  local tool="$1" main="$2"
  shift 2
  local root cp cache
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  cp=${ONCEONLY_CLASSPATH:-}
  if [ -z "$cp" ]; then
    if [ ! -d "$root/target/classes/dev/onceonly/internal/rabbitmq" ]; then
      echo "$tool: no compiled library in $root/target: run mvn -q compile there, or set ONCEONLY_CLASSPATH" >&2
      exit 2
    fi
    cache="$root/target/onceonly-tools.classpath"
    if [ ! -s "$cache" ] || [ "$root/pom.xml" -nt "$cache" ]; then
      (cd "$root" && mvn -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
        -Dmdep.outputFile="$cache" -Dmdep.includeScope=compile) >&2
    fi
    cp="$root/target/classes:$(cat "$cache")"
  fi
  # amqp-client logs through SLF4J; the tool says itself what went wrong.
  exec java -Dslf4j.provider=org.slf4j.helpers.NOP_FallbackServiceProvider -Dslf4j.internal.verbosity=WARN -cp "$cp" "$main" "$@"
}

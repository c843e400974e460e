# syntax=docker/dockerfile:1
# ci-autofix, a Docker container action. GitHub's runner builds this file with no build-arg, so the
# base is the official python:3.13-slim; machines without a registry pass a local stand-in:
#   podman build --build-arg BASE=localhost/python-base:trixie .   (see ci/container/)
# Renovate (renovate.json, docker:pinDigests) pins this default by digest and refreshes the digest;
# a --build-arg BASE=... still replaces the whole reference, digest included.
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
# cryptography (15 MB) is removed AFTER `pip check`, on purpose: PyGithub requires pyjwt[crypto] for
# GitHub App JWTs, which ci-autofix never signs (it takes tokens); pyjwt imports it optionally and
# works without it, token requests too (tests/container/test_slim_image.py). cffi stays: PyNaCl needs it.
# Third-party packages keep only their bytecode: compiled next to the source (`-b`, the legacy
# location Python imports without a source) and the .py and __pycache__ deleted (~22 MB). Kept with
# sources: ci_autofix (tracebacks of our code show their lines) and anyio, whose lazy importer reads
# its own source at import (`inspect.getsource` in anyio/_lazyimport.py).
RUN /tmp/build-venv/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/dist /src \
 && /opt/venv/bin/pip install --no-deps --no-compile /tmp/dist/*.whl \
 && /opt/venv/bin/pip check \
 && /opt/venv/bin/pip uninstall -y -q cryptography \
 && /opt/venv/bin/pip uninstall -y -q pip \
 && site=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
 && find "$site" -name __pycache__ -type d -prune -exec rm -rf {} + \
 && /opt/venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash \
      "$site/ci_autofix" "$site/anyio" \
 && /opt/venv/bin/python -m compileall -b -q -j 0 --invalidation-mode unchecked-hash \
      -x '/site-packages/(ci_autofix|anyio)/' "$site" \
 && find "$site" -name '*.py' ! -path "$site/ci_autofix/*" ! -path "$site/anyio/*" -delete

# ---- final stage: the base, git and CA certificates, and the virtualenv
FROM ${BASE}
# git without perl: Debian's git depends on perl, liberror-perl and git-man, but no git command the
# action runs needs them (tests/container/test_slim_image.py runs each one in the image, push and fetch
# over smart HTTP included). They are removed in the same layer as the install, so their ~52 MB never
# land in the image; only the packages this install added go (the base's perl-base stays: Essential).
# apt stays consistent: a local stand-in package, ci-autofix-git-without-perl (built here with dpkg-deb,
# no files), provides perl, liberror-perl and git-man (git's exact version), so dpkg purges them
# without --force-depends and `apt-get check` passes; a setup-command's `apt-get install -y PKG` works
# as on any Debian (tests/container/test_slim_image.py). Trade-off: a package that depends on plain,
# unversioned `perl` gets no perl (`apt-get install -y perl` brings the real one back); the perl
# libraries checked (libtext-csv-perl) still pull it in.
# git's server and mail helpers are not installed (dpkg path-exclude, as slim images exclude docs):
# git-daemon, git-http-backend, git-shell, git-imap-send, git-http-push (dumb-HTTP push) and scalar,
# each a 2.3 MB program that no command the action runs calls (fetch and push go through
# git-remote-http, which stays). `apt-get install --reinstall git` keeps them out; deleting
# /etc/dpkg/dpkg.cfg.d/ci-autofix-git first brings them back.
# git ships itself twice, in /usr/bin and /usr/lib/git-core (3.9 MB); the identical copy becomes a
# hard link (same bytes: dpkg --verify finds no changed file).
# The checkout belongs to the runner's uid (1001) and the action runs as root: without safe.directory
# git refuses the workspace ("detected dubious ownership").
# hadolint ignore=DL3008
RUN printf 'path-exclude /usr/lib/git-core/%s\n' git-daemon git-http-backend git-shell git-imap-send \
      git-http-push scalar > /etc/dpkg/dpkg.cfg.d/ci-autofix-git \
 && printf 'path-exclude /usr/bin/%s\n' git-shell scalar >> /etc/dpkg/dpkg.cfg.d/ci-autofix-git \
 && dpkg-query -W -f '${Package}\n' > /tmp/pkgs-before \
 && apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && dpkg-query -W -f '${Package}\n' > /tmp/pkgs-after \
 && grep -E '^(perl|perl-modules-.*|libperl5.*|liberror-perl|git-man|libgdbm.*)$' /tmp/pkgs-after \
      > /tmp/pkgs-perl \
 && grep -vxF -f /tmp/pkgs-before /tmp/pkgs-perl > /tmp/pkgs-drop \
 && mkdir -p /tmp/stub/DEBIAN \
 && printf '%s\n' 'Package: ci-autofix-git-without-perl' 'Version: 1' 'Architecture: all' 'Multi-Arch: foreign' \
      'Maintainer: ci-autofix <dev@example.invalid>' 'Section: misc' 'Priority: optional' \
      "Provides: perl, liberror-perl, git-man (= $(dpkg-query -W -f '${Version}' git))" \
      'Description: stands in for perl, liberror-perl and git-man in the ci-autofix image' \
      ' No git command the action runs needs them; apt-get install perl brings the real perl back.' \
      > /tmp/stub/DEBIAN/control \
 && dpkg-deb --build /tmp/stub /tmp/stub.deb >/dev/null \
 && dpkg -i /tmp/stub.deb \
 && xargs dpkg --purge < /tmp/pkgs-drop \
 && apt-get check \
 && rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log /var/cache/debconf/*-old /tmp/pkgs-* /tmp/stub* \
 && if cmp -s /usr/bin/git /usr/lib/git-core/git; then ln -f /usr/bin/git /usr/lib/git-core/git; fi \
 && git config --system --add safe.directory /github/workspace
COPY --from=build /opt/venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1
# python:3.13-slim has no bytecode for its standard library, so each run would compile what it
# imports (about a second before the first API call): compile the ~200 modules the action imports
# (4.7 MB; the whole library's would be twice that).
COPY ci/container/stdlib-bytecode.py /tmp/
RUN python /tmp/stdlib-bytecode.py && rm /tmp/stdlib-bytecode.py
# Exec form only: Debian's /bin/sh drops environment variables whose names contain "-", and the
# runner passes inputs as INPUT_GITHUB-TOKEN and the like. No USER and no WORKDIR: the runner runs
# the container as root with --workdir /github/workspace.
ENTRYPOINT ["python", "-m", "ci_autofix"]

#!/usr/bin/env bash
# Installs what kyma needs on a Debian machine -- only what is missing -- into ./.venv.
#   Debian packages: PostgreSQL server binaries (the embedded catalog, the tests),
#   a JRE (Spark), make, a C compiler and Python's headers (engine/native), python3-venv,
#   Chromium and its driver (the console's browser tests).
#   Python packages: kyma with its test extras. The console's bundle is committed (no npm).
# Idempotent: a second run installs nothing new.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_updated=0
apt_install() {
    if [ "$(id -u)" != 0 ]; then
        echo "setup: missing $*; run as root or: sudo apt-get install $*" >&2
        exit 1
    fi
    if [ "$apt_updated" = 0 ]; then
        apt-get update -qq
        apt_updated=1
    fi
    echo "setup: apt-get install $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_install postgresql
fi
command -v java >/dev/null 2>&1 || apt_install default-jre-headless
command -v make >/dev/null 2>&1 || apt_install make
# engine/native: the install compiles kyma's Cython helpers with the system C compiler.
command -v cc >/dev/null 2>&1 || apt_install gcc libc6-dev
command -v runuser >/dev/null 2>&1 || apt_install util-linux
# make test: fsync as a no-op for the suite's throwaway servers (see the Makefile).
command -v eatmydata >/dev/null 2>&1 || apt_install eatmydata
# tests/pgwire: the Postgres JDBC driver, and a JDK to run the test's one-file Java program.
[ -f /usr/share/java/postgresql.jar ] || apt_install libpostgresql-jdbc-java
command -v javac >/dev/null 2>&1 || apt_install default-jdk-headless
# tests/console: the web console in a real headless browser (Selenium drives it).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    apt_install chromium chromium-driver
fi

python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "setup: kyma needs Python 3.11 or newer; $python is $("$python" --version)" >&2
    exit 1
}
# ... and the Python headers they include.
"$python" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
    apt_install python3-dev
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv 2>/dev/null || {
        rm -rf .venv
        apt_install python3-venv
        "$python" -m venv .venv
    }
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# node-postgres: tests/pgwire drives kyma with a Postgres client in another language too.
command -v npm >/dev/null 2>&1 || apt_install nodejs npm
npm ci --prefix tests/pgwire/node --silent --no-audit --no-fund
echo "setup: ready (.venv/bin/kyma)"

#!/usr/bin/env bash
# Creates ./.venv and installs Spate with its test extras into it.
# Works on a fresh Debian 12 machine with Python 3.11 (and Java 17 for Spark).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "spate: Python 3.11 or newer is required (found: $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    if ! "$PYTHON" -m venv .venv 2>/dev/null; then
        # Debian ships venv separately; install it when we are allowed to.
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
            rm -rf .venv
            "$PYTHON" -m venv .venv
        else
            echo "spate: '$PYTHON -m venv' failed; install the python3-venv package" >&2
            exit 1
        fi
    fi
fi

.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# The project directory on sys.path and the venv's interpreter as Spark's Python, from any directory.
.venv/bin/python platform/project_path.py
echo "spate: installed into $(pwd)/.venv" >&2

#!/usr/bin/env bash
# Prints the folder of a Python virtual environment holding exactly what a pinned
# requirements file lists (pip install --no-deps), made once per requirements file under
# ~/.cache/pms-stack/<name>-<hash of the file>: the PyPI tools the project runs, the
# fuzzer's Schemathesis (scripts/fuzz.sh) and openapi-python-client
# (test/docs/generated-client.test.ts).
#   scripts/python-venv.sh NAME REQUIREMENTS
# What it says while installing goes to standard error; it exits 1 when pip fails.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 NAME REQUIREMENTS" >&2; exit 2; }
name=$1
requirements=$2
venv="$HOME/.cache/pms-stack/$name-$(sha256sum "$requirements" | cut -c1-16)"
# Built beside its place and moved there whole, so a folder that exists is complete.
if [ ! -d "$venv" ]; then
  echo "installing $requirements into $venv" >&2
  rm -rf "$venv.partial"
  python3 -m venv "$venv.partial" >&2
  "$venv.partial/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements" >&2
  # A virtual environment records its own path; moved, its scripts point at the old one.
  sed -i "s#$venv.partial#$venv#g" "$venv.partial"/bin/* "$venv.partial/pyvenv.cfg"
  mv "$venv.partial" "$venv"
fi
echo "$venv"

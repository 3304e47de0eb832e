#!/bin/sh
# Runs an oracle script with the oracle venv's python, or skips (77) when the venv was not made.
# usage: multilabel_oracle_python.sh PYTHON SCRIPT ARGS...
python=$1
shift
if [ ! -x "$python" ]; then
    echo "SKIP: no oracle venv at $python (scripts/oracle-venv BUILD makes it)"
    exit 77
fi
exec "$python" "$@"

#!/usr/bin/env bash
# Runs a command, passes its output through, then prints `exit: N`.
# lit's shell cannot test for one exit status (`not` accepts any failure):
# tests pipe this through FileCheck to tell exit 1 (bad program) from exit 2
# (bad command line) and from a crash (128 + signal).
"$@"
echo "exit: $?"

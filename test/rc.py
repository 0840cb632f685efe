#!/usr/bin/env python3
"""Runs a command, passes its output through, then prints `exit: N`.

lit's shell cannot test for one exit status (`not` accepts any failure);
tests pipe this through FileCheck to tell exit 1 (bad program) from exit 2
(bad command line) and from a crash (negative: killed by a signal)."""
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
sys.stdout.flush()
print(f"exit: {rc}", flush=True)

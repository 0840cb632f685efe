#!/usr/bin/env python3
"""Starts OUT/launch for many steps, sends it a signal once its ranks run,
and reports launch's exit status, how many of its ranks are still alive a
moment later, and how many files are left under RES.

    signal_launch.py LAUNCH RES TERM|INT|HUP|KILLRANK

KILLRANK kills one of the ranks instead (SIGKILL): the run must end, the
other ranks with it."""
import os
import signal
import subprocess
import sys
import time

launch, res, sig = sys.argv[1], sys.argv[2], sys.argv[3]
exe_dir = os.path.dirname(os.path.abspath(launch))
# Default dispositions for launch: a test runner may start us with SIGINT
# ignored, and a shell cannot trap a signal ignored when it starts.
def defaults():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


p = subprocess.Popen([launch, "--outputs", res, "--steps", "100000000"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                     preexec_fn=defaults)


def rank_pids():
    """Processes running one of this OUT's rank executables."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if os.path.dirname(exe) == exe_dir:
            found.append(int(pid))
    return found


def ranks():
    return len(rank_pids())


deadline = time.time() + 60
while ranks() < 2 and time.time() < deadline:
    time.sleep(0.1)
time.sleep(0.5)
started = time.time()
if sig == "KILLRANK":  # one rank dies (SIGKILL, as the OOM killer does)
    os.kill(rank_pids()[0], signal.SIGKILL)
else:
    p.send_signal(getattr(signal, "SIG" + sig))
out, err = p.communicate(timeout=60)
if sig == "KILLRANK":
    print(f"ended within 60 s: {time.time() - started < 60}")
time.sleep(1)
files = sum(len(f) for _, _, f in os.walk(res)) if os.path.isdir(res) else 0
sys.stdout.write(err)
left = rank_pids()
for pid in left:  # what kept them (for the record), then end them
    try:
        st = open(f"/proc/{pid}/stat").read().split()
        print(f"left: pid {pid} ppid {st[3]} pgrp {st[4]} session {st[5]}", file=sys.stderr)
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
print(f"launch exit {p.returncode}; ranks left: {len(left)}; files left: {files}")

#!/usr/bin/env python3
"""Reads a --trace timeline of a data-parallel step and checks, on every
rank, that the first gradient bucket's reduction starts before the last
gradient is computed: some part begins after the first bucket's reduction
started and before the last bucket's reduction starts.

    check_trace.py TRACE.json"""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
ranks = sorted({e["pid"] for e in events if e.get("ph") == "X"})
ok = 0
for r in ranks:
    mine = [e for e in events if e.get("ph") == "X" and e["pid"] == r]
    buckets = sorted((e for e in mine if "rankc.bucket." in e["name"]),
                     key=lambda e: int(e["name"].split("rankc.bucket.")[1].split('"')[0]))
    parts = [e for e in mine if e["cat"] == "compute"]
    first, last = buckets[0]["ts"], buckets[-1]["ts"]
    between = [p for p in parts if first <= p["ts"] < last]
    if len(buckets) >= 2 and between:
        ok += 1
        print(f"rank {r}: bucket 0 starts at {first:.0f} us, {len(between)} part(s) "
              f"compute gradients before the last bucket starts at {last:.0f} us")
    else:
        print(f"rank {r}: no computation overlaps the first bucket's reduction")
print(f"{ok} passed, {len(ranks) - ok} failed")
sys.exit(0 if ok == len(ranks) else 1)

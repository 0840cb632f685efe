"""What `launch --stats` and `--trace` report of a step whose buckets a
machine model chose (issue 41), for bucket-auto.test:

    check_bucket_report.py PLAN.json STATS.json TRACE.json STEPS

Each rank's stats list every bucket of plan.json with the model's
prediction as plan.json has it and the measured mean over STEPS steps;
the buckets' predicted exposed shares add up to bucket_choice's; the trace
has each bucket's predicted reduction once a step on its own track."""
import json
import sys

plan_path, stats_path, trace_path, steps = sys.argv[1:5]
steps = int(steps)
plan = json.load(open(plan_path))
stats = json.load(open(stats_path))
trace = json.load(open(trace_path))["traceEvents"]
buckets = plan["buckets"]
exposed = sum(b["predicted"]["exposed_seconds"] for b in buckets)
assert abs(exposed - plan["bucket_choice"]["exposed_seconds"]) < 1e-6, \
    (exposed, plan["bucket_choice"])
print(f"predicted exposed shares add up: yes ({len(buckets)} buckets)")
for r in stats["ranks"]:
    got = r["buckets"]
    assert [b["index"] for b in got] == list(range(len(buckets))), got
    for b, want in zip(got, buckets):
        p, w = b["predicted"], want["predicted"]
        for key in ("ready", "start", "reduce", "exposed"):
            assert abs(p[key] - w[key + "_seconds"]) < 1e-5, (key, p, w)
        m = b["measured"]
        assert m["steps"] == steps, m
        assert 0 <= m["start"] <= m["end"] and 0 <= m["exposed"] <= m["end"], m
    print(f"rank {r['rank']}: {len(got)} buckets, predicted as plan.json, "
          f"measured over {steps} steps")
for rank in range(len(stats["ranks"])):
    mine = [e for e in trace if e.get("pid") == rank and e.get("tid") == 2]
    slices = [e for e in mine if e["ph"] == "X"]
    names = [e for e in mine if e["ph"] == "M" and e["name"] == "thread_name"]
    assert len(slices) == steps * len(buckets), (len(slices), steps, len(buckets))
    assert all(e["name"].endswith("(predicted)") for e in slices)
    assert names and names[0]["args"]["name"] == "predicted (machine model)"
    print(f"rank {rank}: trace track 'predicted (machine model)', "
          f"{len(slices) // steps} slices a step")

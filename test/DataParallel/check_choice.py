"""Prints what plan.json says of --bucket-cap-mb auto's choice, for
bucket-auto.test: the choice, the bucket count, whether the chosen
candidate is the soonest predicted, and the predictions' consistency."""
import json
import sys

plan = json.load(open(sys.argv[1]))
buckets = plan["buckets"]
choice = plan.get("bucket_choice")
if not choice:
    have = any("predicted" in b for b in buckets)
    print(f"no bucket_choice, {len(buckets)} bucket(s), "
          f"{'predictions' if have else 'no predictions'}")
    sys.exit(0)
cands = choice["candidates"]
soonest = min(cands.values())
print(f"chosen {choice['chosen']}, {len(buckets)} bucket(s), the soonest of {len(cands)} "
      f"candidates: {'yes' if cands[choice['chosen']] == soonest else 'no'}")
print(f"exposed {choice['exposed_seconds']:.4f} s")
print(f"model before cap 25 MiB: {'yes' if cands['model'] < cands['cap 25 MiB'] else 'no'}")
print(f"calibrated ranks {choice['calibrated_ranks']}")
# Buckets in order: each starts once ready and after the one before.
end = 0.0
for b in buckets:
    p = b["predicted"]
    assert p["start_seconds"] >= p["ready_seconds"] - 1e-12, b
    assert p["start_seconds"] >= end - 1e-12 or choice["overlap"] < 1, b
    end = p["start_seconds"] + p["reduce_seconds"] * choice["overlap"]

#!/usr/bin/env python3
"""--bucket-cap-mb auto against DDP's fixed caps (issue 41), on this machine.

    bench/bucket_auto.py RANKC WORK MACHINE.json [RANKS] [STEPS] [ROUNDS]

For each exported model (mlp-large and transformer-large of
scripts/export_torch.py, SGD in the step) the step is compiled with caps
of 1, 5, 25 and 100 MiB, the 25 MiB build run once with --stats (the
profile), then with `--bucket-cap-mb auto --machine MACHINE.json
--profile` that; every build runs STEPS steps (`launch --steps --stats`),
ROUNDS times, the builds alternating within each round. Prints a table:
the median step time of each build (each step's slowest rank; the
median over steps, then over rounds), auto's choice and its predicted
step (computation, exposed communication and the profile's measured
overhead) against the measured one; then, per rank and bucket of
the auto build, the model's start, end and exposed time beside the
measured ones (`launch --stats`)."""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def main():
    rankc, work, machine = sys.argv[1:4]
    ranks = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 5
    os.makedirs(work, exist_ok=True)
    reports = []
    print("| model | ranks | build | buckets | median step ms | rounds' range ms | vs best fixed |")
    print("|---|---|---|---|---|---|---|")
    for model in ("mlp-large", "transformer-large"):
        dag = os.path.join(work, model + ".json")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_torch.py"), model,
                        dag, "--world-size", str(ranks), "--optimizer", "sgd", "--lr", "0.01"],
                       check=True)
        builds = {}
        for cap in ("1", "5", "25", "100"):
            builds[f"cap {cap} MiB"] = ["--bucket-cap-mb", cap]
        profile = os.path.join(work, model + "-profile.json")
        ref = os.path.join(work, model, "cap 25 MiB")
        subprocess.run([rankc, "compile", dag, "-o", ref, "--bucket-cap-mb", "25"], check=True)
        subprocess.run([os.path.join(ref, "launch"), "--steps", str(steps), "--stats", profile,
                        "--outputs", os.path.join(work, "res")], check=True,
                       stdout=subprocess.DEVNULL)
        builds["auto"] = ["--bucket-cap-mb", "auto", "--machine", machine, "--profile", profile]
        for name, flags in builds.items():
            subprocess.run([rankc, "compile", dag, "-o", os.path.join(work, model, name)] + flags,
                           check=True)
        times = {name: [] for name in builds}
        for _ in range(rounds):
            for name in builds:
                out = os.path.join(work, model, name)
                stats = os.path.join(out, "stats.json")
                subprocess.run([os.path.join(out, "launch"), "--steps", str(steps), "--stats",
                                stats, "--outputs", os.path.join(work, "res")], check=True,
                               stdout=subprocess.DEVNULL)
                s = json.load(open(stats))["ranks"]
                # Each step's time is its slowest rank's; a round's is the
                # median step (the first, which loads and allocates, aside),
                # as the profile's are medians.
                per_step = [max(r["per_step"][k]["wall"] for r in s) for k in range(steps)]
                times[name].append(statistics.median(per_step))
        med = {n: statistics.median(t) for n, t in times.items()}
        best_fixed = min(v for n, v in med.items() if n != "auto")
        for name in builds:
            plan = json.load(open(os.path.join(work, model, name, "plan.json")))
            print(f"| {model} | {ranks} | {name} | {len(plan['buckets'])} | "
                  f"{med[name] * 1e3:.2f} | {min(times[name]) * 1e3:.2f}-{max(times[name]) * 1e3:.2f} | "
                  f"{med[name] / best_fixed:.3f}x |")
        choice = json.load(open(os.path.join(work, model, "auto", "plan.json")))["bucket_choice"]
        predicted = choice.get("step_seconds", choice["finish_seconds"])
        print(f"| {model} | {ranks} | auto chose | {choice['chosen']} | predicted step "
              f"{predicted * 1e3:.2f} ms (compute {choice['compute_seconds'] * 1e3:.2f}, "
              f"exposed {choice['exposed_seconds'] * 1e3:.2f}, "
              f"overhead {choice.get('overhead_seconds', 0) * 1e3:.2f}) | measured "
              f"{med['auto'] * 1e3:.2f} ms | predicted / measured {predicted / med['auto']:.2f} |")
        # Per bucket, the last round of the auto build: the model's times
        # beside the measured means (launch --stats `buckets`), ms into the step.
        stats = json.load(open(os.path.join(work, model, "auto", "stats.json")))
        for r in stats["ranks"]:
            for b in r.get("buckets", []):
                p, m = b.get("predicted", {}), b.get("measured", {})
                reports.append(
                    f"| {model} | {r['rank']} | {b['index']} | "
                    f"{p.get('start', 0) * 1e3:.2f} / {m.get('start', 0) * 1e3:.2f} | "
                    f"{p.get('end', 0) * 1e3:.2f} / {m.get('end', 0) * 1e3:.2f} | "
                    f"{p.get('exposed', 0) * 1e3:.2f} / {m.get('exposed', 0) * 1e3:.2f} | "
                    f"{r['median']['wall'] * 1e3:.2f} |")
    print()
    print("| model | rank | bucket | start ms (predicted / measured) | end ms | exposed ms "
          "| measured step ms |")
    print("|---|---|---|---|---|---|---|")
    for line in reports:
        print(line)


if __name__ == "__main__":
    main()

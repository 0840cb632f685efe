#!/usr/bin/env python3
"""Random MPMD programs for the cross-rank verifier and the partitioner.

    random_dags.py RANKC OUTDIR [--count N] [--seed S]

Writes N deadlock-free programs and N deliberately cyclic ones (two- and
three-rank cycles through computation, hidden among valid messages), runs
`RANKC check` on each and `RANKC compile --emit plan` on the valid ones, and
checks the verdicts: valid ones pass (and compile the same way twice),
cyclic ones fail with exit 1 and a deadlock message naming the ranks of
the cycle. Prints "N passed, M failed"; exits 1 if anything failed.

Valid programs are deadlock-free by construction: messages are generated in
one global order, and each send carries a value that exists at that point
of the order, so happens-before follows the generation order."""
import json
import os
import random
import subprocess
import sys


class Builder:
    def __init__(self, rng, ranks):
        self.rng = rng
        self.ranks = ranks
        self.nodes = [[] for _ in range(ranks)]
        self.values = [[] for _ in range(ranks)]  # ids with a value
        self.outputs = [{} for _ in range(ranks)]
        self.count = 0
        self.tag = 0
        for r in range(ranks):
            self.add(r, {"op": "input", "shape": [4], "dtype": "f32"})

    def add(self, r, node):
        self.count += 1
        node["id"] = f"n{self.count}"
        self.nodes[r].append(node)
        if node["op"] != "send":
            self.values[r].append(node["id"])
        return node["id"]

    def compute(self, r, steps):
        for _ in range(steps):
            v = self.values[r]
            if self.rng.random() < 0.5:
                self.add(r, {"op": self.rng.choice(["neg", "exp", "tanh"]),
                             "args": [self.rng.choice(v)]})
            else:
                self.add(r, {"op": self.rng.choice(["add", "mul", "maximum"]),
                             "args": [self.rng.choice(v), self.rng.choice(v)]})

    def fresh_tag(self):
        self.tag += 1
        return self.tag if self.rng.random() < 0.5 else f"t{self.tag}"

    def message(self, src, dst, value=None, tag=None):
        value = value or self.rng.choice(self.values[src])
        tag = self.fresh_tag() if tag is None else tag
        peer = (dst - src) % self.ranks
        dest = {"offset": peer} if self.rng.random() < 0.3 else dst
        self.add(src, {"op": "send", "args": [value], "dest": dest, "tag": tag})
        return self.add(dst, {"op": "recv", "src": src, "tag": tag,
                              "shape": [4], "dtype": "f32"})

    def allreduce(self):
        tag = f"all{self.fresh_tag()}"
        reduce = self.rng.choice(["sum", "max", "mean"])
        for r in range(self.ranks):
            self.add(r, {"op": "allreduce", "args": [self.rng.choice(self.values[r])],
                         "reduce": reduce, "tag": tag})

    def valid_traffic(self, events):
        for _ in range(events):
            roll = self.rng.random()
            r = self.rng.randrange(self.ranks)
            if roll < 0.45:
                self.compute(r, self.rng.randint(1, 3))
            elif roll < 0.9:
                dst = self.rng.randrange(self.ranks)
                got = self.message(r, dst)
                if self.rng.random() < 0.2:  # forward it unchanged
                    self.message(dst, self.rng.randrange(self.ranks), value=got)
                if self.rng.random() < 0.2:  # send one value twice
                    v = self.rng.choice(self.values[r])
                    self.message(r, self.rng.randrange(self.ranks), value=v)
                    self.message(r, self.rng.randrange(self.ranks), value=v)
            else:
                self.allreduce()

    def cycle(self, members):
        """Each member waits for the previous one's message before it sends
        to the next: a cycle of waits through computation."""
        tags = [self.fresh_tag() for _ in members]
        recvs = {}
        for i, r in enumerate(members):
            prev = members[i - 1]
            recvs[r] = self.add(r, {"op": "recv", "src": prev, "tag": tags[i],
                                    "shape": [4], "dtype": "f32"})
        for i, r in enumerate(members):
            nxt = members[(i + 1) % len(members)]
            y = self.add(r, {"op": "exp", "args": [recvs[r]]})
            self.add(r, {"op": "send", "args": [y], "dest": nxt,
                         "tag": tags[(i + 1) % len(members)]})

    def document(self):
        for r in range(self.ranks):
            last = self.values[r][-1]
            self.outputs[r] = {"out": last, "out_copy": last}
        progs = []
        for r in range(self.ranks):
            nodes = list(self.nodes[r])
            self.rng.shuffle(nodes)  # nodes may appear in any order
            progs.append({"ranks": [r], "nodes": nodes, "outputs": self.outputs[r]})
        return {"format": "rankc-dag", "version": 1, "world_size": self.ranks,
                "programs": progs}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    rankc, outdir = sys.argv[1], sys.argv[2]
    count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 20
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(seed)
    passed = failed = 0

    def verdict(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL:", what)

    for i in range(count):
        ranks = rng.randint(2, 4)
        b = Builder(rng, ranks)
        b.valid_traffic(rng.randint(5, 30))
        path = os.path.join(outdir, f"valid{i}.json")
        with open(path, "w") as f:
            json.dump(b.document(), f)
        rc, out, err = run([rankc, "check", path])
        verdict(rc == 0 and "no deadlock" in out, f"{path} should pass: {err}")
        rc1, plan1, err1 = run([rankc, "compile", path, "--emit", "plan", "-o", "-"])
        rc2, plan2, _ = run([rankc, "compile", path, "--emit", "plan", "-o", "-"])
        verdict(rc1 == 0 and plan1 == plan2 and json.loads(plan1)["world_size"] == ranks,
                f"{path} should compile deterministically: {err1}")

        members = rng.sample(range(max(ranks, 3) if i % 2 else ranks),
                             3 if i % 2 else 2)
        b = Builder(rng, max(ranks, max(members) + 1))
        b.valid_traffic(rng.randint(0, 10))
        b.cycle(members)
        b.valid_traffic(rng.randint(0, 10))
        path = os.path.join(outdir, f"cyclic{i}.json")
        with open(path, "w") as f:
            json.dump(b.document(), f)
        rc, out, err = run([rankc, "check", path])
        named = all(f"rank {r}," in err for r in members)
        verdict(rc == 1 and err.startswith("error:") and "deadlock" in err and named,
                f"{path} should be a deadlock among ranks {members}: rc={rc} {err}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

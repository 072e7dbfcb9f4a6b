#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torchbench: PyTorch on the GPU, natively and through axon (issue 4's
"PyTorch training steps/s" row). bench/gpu/run.sh runs it twice; which
libcuda.so.1 PyTorch loads (NVIDIA's or axon's shim) is decided by
LD_LIBRARY_PATH, and the program prints the one it found in its own maps.

    torchbench.py [--quick] [--only GROUP,...]

Each group runs in a child process of its own (this script again, with
--child), so a crash or hang in one group costs only that group's rows:
they are printed as n/a with the child's exit status and last error line.
Groups, in order, and their rows (drvbench's format: `name value unit`,
`name.p99`, `name.mean`, `name n/a unit # reason`; '#' for the rest):

  (first) torch_cuda_init   ms      first CUDA use after `import torch`:
                                    a 1-element tensor on the GPU + sync
  mlp     torch_train_mlp   step/s  MLP 1024-4096-4096-4096-1000, FP32,
                                    batch 256, AdamW; a step is zero_grad,
                                    forward, cross-entropy, backward,
                                    optimizer step and loss.item() (the sync)
          torch_train_mlp_gpu ms    the same steps' GPU span: CUDA events
                                    recorded at the step's start (before
                                    forward) and after the optimizer step;
                                    the wall time minus this is what the
                                    step waits for outside the GPU's work
                                    (launch latency, the final sync)
  cnn     torch_train_cnn   step/s  3-conv + BatchNorm convnet, 128 x 3x32x32,
                                    SGD with momentum; same step shape
          torch_train_cnn_gpu ms    as torch_train_mlp_gpu
  matmul  torch_matmul_bf16 TFLOP/s 8192^3 bf16 torch.matmul; CUDA events
                                    around 10 back to back per sample
  ops     torch_tiny_ops    op/s    200 tiny in-place elementwise kernels
                                    (1024 floats) per step, then a sync:
                                    launch-bound

Step rows: per-step wall time (time.perf_counter), warm-up steps thrown
away, value = 1 / p50 time, p99 column = 1 / p99 time (the slow tail),
mean = steps / total time. Every group checks its answer (the loss fell
and is finite, the product matches a CPU reference at sampled elements,
the elementwise recurrence has its closed-form value); a wrong answer makes
the row n/a.
"""
import math
import os
import subprocess
import sys
import time

# The first child (whatever its group) also prints this row.
INIT = ("torch_cuda_init", "ms")
GROUPS = [
    ("mlp", [("torch_train_mlp", "step/s"), ("torch_train_mlp_gpu", "ms")]),
    ("cnn", [("torch_train_cnn", "step/s"), ("torch_train_cnn_gpu", "ms")]),
    ("matmul", [("torch_matmul_bf16", "TFLOP/s")]),
    ("ops", [("torch_tiny_ops", "op/s")]),
]


def fmt(v):
    """drvbench's number format."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    if a >= 0.1:
        return "%.3f" % v
    return "%.4f" % v


def put(name, unit, v, p99=None, mean=None, note=None):
    if note:
        print("# %s: %s" % (name, note))
    print("%s %s %s" % (name, fmt(v), unit))
    if p99 is not None:
        print("%s.p99 %s %s" % (name, fmt(p99), unit))
    if mean is not None:
        print("%s.mean %s %s" % (name, fmt(mean), unit))
    sys.stdout.flush()


def put_na(name, unit, why):
    why = " ".join(str(why).split())[:200]
    print("%s n/a %s # %s" % (name, unit, why))
    sys.stdout.flush()


def pct(v):
    """p50, p99 by nearest rank (as bench.h), mean."""
    s = sorted(v)
    n = len(s)
    return s[(n - 1) // 2], s[(n * 99 + 99) // 100 - 1], sum(s) / n


# ---- the child: one group ---------------------------------------------------


def steps(fn, warm, n):
    """Runs fn() warm + n times; returns the n timed durations (s) and the
    values fn returned first and last."""
    first = fn()
    for _ in range(warm - 1):
        fn()
    t = []
    last = None
    for _ in range(n):
        t0 = time.perf_counter()
        last = fn()
        t.append(time.perf_counter() - t0)
    return t, first, last


def put_steps(name, unit, t, work, note):
    """A rate row from per-step times: work units per step."""
    p50, p99, _ = pct(t)
    put(name, unit, work / p50, work / p99, work * len(t) / sum(t), note)


def train(name, model, opt, x, y, warm, n, torch):
    F = torch.nn.functional
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    spans = []

    def step():
        opt.zero_grad(set_to_none=True)
        start.record()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        end.record()
        v = loss.item()
        spans.append(start.elapsed_time(end) / 1e3)
        return v

    t, first, last = steps(step, warm, n)
    spans = spans[-n:]
    if not (math.isfinite(first) and math.isfinite(last)) or last >= first:
        put_na(name, "step/s", "training went wrong: loss %.4g at the first step, %.4g at the last"
               % (first, last))
        return
    put_steps(name, "step/s", t, 1.0,
              "%d steps after %d warm-up; loss %.3f -> %.3f; step p50 %.3f ms"
              % (n, warm, first, last, pct(t)[0] * 1e3))
    p50, p99, mean = pct(spans)
    put(name + "_gpu", "ms", p50 * 1e3, p99 * 1e3, mean * 1e3,
        "GPU span of the same steps (start event to end event)")


def g_mlp(torch, quick):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                          nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, 1024, device="cuda")
    y = torch.randint(0, 1000, (256,), device="cuda")
    train("torch_train_mlp", model, opt, x, y, 5 if quick else 20, 30 if quick else 200, torch)


def g_cnn(torch, quick):
    nn = torch.nn
    torch.manual_seed(0)

    def block(i, o, s):
        return [nn.Conv2d(i, o, 3, stride=s, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    model = nn.Sequential(*block(3, 64, 1), *block(64, 128, 2), *block(128, 256, 2),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    x = torch.randn(128, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (128,), device="cuda")
    train("torch_train_cnn", model, opt, x, y, 5 if quick else 20, 30 if quick else 200, torch)


def g_matmul(torch, quick):
    n, k, samples = 8192, 10, 5 if quick else 20
    torch.manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    t = []
    for i in range(samples + 3):  # 3 warm-up samples
        e0.record()
        for _ in range(k):
            torch.matmul(a, b, out=c)
        e1.record()
        e1.synchronize()
        if i >= 3:
            t.append(e0.elapsed_time(e1) / 1e3)
    # 8 sampled elements against a float64 CPU reference.
    for s in range(8):
        i, j = (s * 7919 + 13) % n, (s * 104729 + 5) % n
        ar = a[i, :].double().cpu()
        bc = b[:, j].double().cpu()
        ref = float((ar * bc).sum())
        mag = float((ar * bc).abs().sum())
        got = float(c[i, j])
        if not abs(got - ref) <= 2e-3 * mag + 1e-2:
            put_na("torch_matmul_bf16", "TFLOP/s",
                   "wrong result: C[%d,%d] = %.6g, reference %.6g" % (i, j, got, ref))
            return
    put_steps("torch_matmul_bf16", "TFLOP/s", t, 2.0 * n ** 3 * k / 1e12,
              "%dx%dx%d bf16 torch.matmul, %d per CUDA-event window, %d windows after 3 warm-up"
              % (n, n, n, k, samples))


def g_ops(torch, quick):
    pairs, warm, n = 100, 5 if quick else 20, 30 if quick else 200
    x = torch.zeros(1024, device="cuda")

    def step():
        for _ in range(pairs):
            x.mul_(0.999).add_(0.001)
        torch.cuda.synchronize()

    t, _, _ = steps(step, warm, n)
    # x(m) = 1 - 0.999^m after m mul+add pairs, from x = 0.
    want = 1.0 - 0.999 ** (pairs * (warm + n))
    got = float(x[0])
    if not abs(got - want) <= 1e-3:
        put_na("torch_tiny_ops", "op/s", "wrong result: x = %.6g, expected %.6g" % (got, want))
        return
    put_steps("torch_tiny_ops", "op/s", t, 2.0 * pairs,
              "%d tiny in-place kernels (mul_, add_ on 1024 floats) + torch.cuda.synchronize per "
              "step; %d steps after %d warm-up; step p50 %.1f us"
              % (2 * pairs, n, warm, pct(t)[0] * 1e6))


def libcuda_path():
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if os.path.basename(p).startswith("libcuda.so"):
                    return p
    except OSError:
        pass
    return "(not mapped)"


def child(group, quick, first):
    rows = ([INIT] if first else []) + dict(GROUPS)[group]
    t0 = time.perf_counter()
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is the row's reason
        for name, unit in rows:
            put_na(name, unit, "import torch: %s: %s" % (type(e).__name__, e))
        return 0
    t1 = time.perf_counter()
    try:
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        z = torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        del z
    except Exception as e:  # noqa: BLE001
        for name, unit in rows:
            put_na(name, unit, "CUDA init: %s: %s" % (type(e).__name__, e))
        return 0
    if first:
        print("# torch %s (CUDA %s, cuDNN %s), %s; import %.2f s"
              % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version(),
                 torch.cuda.get_device_name(0), t1 - t0))
        print("# libcuda: %s" % libcuda_path())
        put(INIT[0], INIT[1], (t2 - t1) * 1e3, note="after import torch: "
            "torch.zeros(1, device='cuda') + torch.cuda.synchronize()")
    fn = {"mlp": g_mlp, "cnn": g_cnn, "matmul": g_matmul, "ops": g_ops}[group]
    try:
        fn(torch, quick)
    except Exception as e:  # noqa: BLE001
        for name, unit in dict(GROUPS)[group]:
            put_na(name, unit, "%s: %s" % (type(e).__name__, e))
    return 0


# ---- the parent: one child per group ------------------------------------------


def parent(groups, quick, limit):
    import importlib.util

    print("# torchbench%s: %s; AXON_ADDR: %s" % (" (quick)" if quick else "", sys.executable,
                                                 os.environ.get("AXON_ADDR", "(unset)")))
    sys.stdout.flush()
    if importlib.util.find_spec("torch") is None:
        for name, unit in [INIT] + [r for g, rows in GROUPS if g in groups for r in rows]:
            put_na(name, unit, "%s has no module torch" % sys.executable)
        return 0
    first = True
    hung = None
    for g, rows in GROUPS:
        if g not in groups:
            continue
        rows = ([INIT] if first else []) + rows
        if hung:
            # A child that hung before printing anything (CUDA set-up)
            # would hang in every later group too.
            for name, unit in rows:
                put_na(name, unit, "skipped: %s" % hung)
            first = False
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--child", g]
        if quick:
            cmd.append("--quick")
        if first:
            cmd.append("--first")
        print("# group %s" % g)
        sys.stdout.flush()
        seen = set()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=limit, universal_newlines=True, errors="replace")
            out, err, why = p.stdout, p.stderr, None
            if p.returncode:
                why = "child exited with status %d" % p.returncode
        except subprocess.TimeoutExpired as e:
            def text(b):
                if b is None:
                    return ""
                return b if isinstance(b, str) else b.decode("utf-8", "replace")

            out, err = text(e.stdout), text(e.stderr)
            why = "child killed after %d s" % limit
            if not any(ln and not ln.startswith("#") for ln in out.splitlines()):
                hung = "group %s hung with no figure (killed after %d s)" % (g, limit)
        for line in out.splitlines():
            print(line)
            f = line.split()
            if len(f) >= 3 and not line.startswith("#"):
                seen.add(f[0])
        if why:
            lines = [s for s in err.splitlines() if s.strip()]
            for s in lines[-5:]:
                print("# stderr: %s" % s)
            last = lines[-1].strip() if lines else "no stderr"
            for name, unit in rows:
                if name not in seen:
                    put_na(name, unit, "%s; %s" % (why, last))
        first = False
        sys.stdout.flush()
    return 0


def main(argv):
    quick, only, grp, first = False, None, None, False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--quick":
            quick = True
        elif a == "--only" and i + 1 < len(argv):
            i += 1
            only = argv[i].split(",")
        elif a == "--child" and i + 1 < len(argv):
            i += 1
            grp = argv[i]
        elif a == "--first":
            first = True
        else:
            sys.stderr.write("usage: torchbench.py [--quick] [--only GROUP,...]\n"
                             "groups: %s\n" % " ".join(g for g, _ in GROUPS))
            return 2
        i += 1
    names = [g for g, _ in GROUPS]
    if grp is not None:
        if grp not in names:
            sys.stderr.write("torchbench.py: no group %s\n" % grp)
            return 2
        return child(grp, quick, first)
    groups = names if only is None else [g for g in only if g in names]
    if only is not None and len(groups) != len(only):
        sys.stderr.write("torchbench.py: unknown group in %s\n" % ",".join(only))
        return 2
    return parent(groups, quick, int(os.environ.get("TORCHBENCH_TIMEOUT", "60")))


if __name__ == "__main__":
    sys.exit(main(sys.argv))

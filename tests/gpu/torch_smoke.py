#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch smoke test, run natively and through axon by tests/gpu/gpucheck.sh.

Parts (each prints one line "NAME: PASS|FAIL details"; details are rounded
or exact so that the native run and the run through axon print the same):

  device     CUDA is available, one device or more, its compute capability
  tensors    elementwise ops, reductions, indexing, sort, cumsum on the GPU,
             each compared with the same on the CPU
  matmul     float32 (TF32 off) 512x384 @ 384x256 against float64 on the
             CPU, relative error < 1e-4; float16 against float32, < 1e-2
  training   a small MLP, 300 steps of Adam on a fixed synthetic regression
             problem: the loss must fall below a fifth of its start
  graphs     torch.cuda.CUDAGraph: capture a few ops on a static input,
             replay on new data, compare with eager
  compile    torch.compile (default mode, Inductor + Triton) of a small
             function, compared with eager
  oom        allocating more than the device has raises
             torch.cuda.OutOfMemoryError; a later allocation works
  isolation  (only with AXON_ISOCHECK_LIBCUDA set) this process holds no
             /dev/nvidia* descriptor or mapping, mapped no libcuda but
             that one and no libnvidia-ml but the libnvidia-ml.so.1 beside
             it (isocheck.so's rules); violations go to AXON_ISOCHECK_OUT
             and stderr only, so stdout is the same natively

Exit status 0 when every part passed, 1 otherwise. Tracebacks go to stderr.
"""
import os
import sys
import traceback

import torch

results = []


def part(name):
    """Runs a part; its function returns the details string or raises."""
    def wrap(fn):
        try:
            details = fn()
            results.append((name, True))
            print(f"{name}: PASS {details}", flush=True)
        except Exception as e:  # report and go on with the next part
            results.append((name, False))
            print(f"{name}: FAIL {type(e).__name__}", flush=True)
            traceback.print_exc(file=sys.stderr)
        return fn
    return wrap


def check(cond, what):
    if not cond:
        raise AssertionError(what)


dev = torch.device("cuda")


@part("device")
def _device():
    check(torch.cuda.is_available(), "torch.cuda.is_available() is False")
    n = torch.cuda.device_count()
    check(n >= 1, f"{n} devices")
    major, minor = torch.cuda.get_device_capability(0)
    return f"cuda available, compute capability {major}.{minor}"


@part("tensors")
def _tensors():
    g = torch.Generator().manual_seed(1)
    a_cpu = torch.randn(1000, 257, generator=g)
    b_cpu = torch.randn(1000, 257, generator=g)
    a, b = a_cpu.to(dev), b_cpu.to(dev)
    ew = (a * b + a.exp().clamp(max=10) - b.abs().sqrt()).cpu()
    check(torch.allclose(ew, a_cpu * b_cpu + a_cpu.exp().clamp(max=10) - b_cpu.abs().sqrt(),
                         rtol=1e-5, atol=1e-5), "elementwise")
    n = 1 << 20
    ints = torch.arange(n, device=dev, dtype=torch.int64)
    total = int(ints.sum().item())
    check(total == n * (n - 1) // 2, f"sum {total}")
    check(torch.equal(ints.cumsum(0).cpu(), torch.arange(n, dtype=torch.int64).cumsum(0)),
          "cumsum")
    check(torch.equal(a[::7, 3:9].cpu(), a_cpu[::7, 3:9]), "strided indexing")
    idx = torch.tensor([5, 0, 999, 42], device=dev)
    check(torch.equal(a.index_select(0, idx).cpu(), a_cpu.index_select(0, idx.cpu())),
          "index_select")
    check(torch.equal(a.sort(dim=1).values.cpu(), a_cpu.sort(dim=1).values), "sort")
    mean = a.mean().item()
    check(abs(mean - a_cpu.double().mean().item()) < 1e-5, "mean")
    cat = torch.cat([a, b], dim=1)
    check(cat.shape == (1000, 514), "cat shape")
    return f"sum of arange(2^20) = {total}, cumsum, indexing, sort, cat as on the CPU"


@part("matmul")
def _matmul():
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator().manual_seed(2)
    x = torch.randn(512, 384, generator=g)
    w = torch.randn(384, 256, generator=g)
    got = (x.to(dev) @ w.to(dev)).cpu().double()
    want = x.double() @ w.double()
    rel = ((got - want).abs().max() / want.abs().max()).item()
    check(rel < 1e-4, f"float32 relative error {rel}")
    h = (x.to(dev).half() @ w.to(dev).half()).float().cpu()
    rel16 = ((h.double() - want).abs().max() / want.abs().max()).item()
    check(rel16 < 1e-2, f"float16 relative error {rel16}")
    return "512x384 @ 384x256: float32 within 1e-4, float16 within 1e-2 of float64"


@part("training")
def _training():
    torch.manual_seed(3)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2048, 16, generator=g)
    w_true = torch.randn(16, 1, generator=g)
    y = torch.sin(x @ w_true) + 0.1 * x[:, :1] ** 2
    x, y = x.to(dev), y.to(dev)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 1)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = torch.nn.MSELoss()
    first = None
    for step in range(300):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if first is None:
            first = loss.item()
    last = loss_fn(model(x), y).item()
    check(last < first / 5, f"loss {first} -> {last}")
    return f"300 Adam steps, loss fell below a fifth of its start ({first:.2f} at step 0)"


@part("graphs")
def _graphs():
    w = torch.randn(64, 64, generator=torch.Generator().manual_seed(4)).to(dev)
    static_in = torch.zeros(128, 64, device=dev)

    def f(t):
        return torch.relu((t * 2 + 1) @ w).sin()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm up outside the capture, as PyTorch asks
            f(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = f(static_in)
    ok = 0
    for seed in range(5):
        data = torch.randn(128, 64, generator=torch.Generator().manual_seed(10 + seed))
        static_in.copy_(data.to(dev))
        graph.replay()
        torch.cuda.synchronize()
        want = f(data.to(dev))
        check(torch.allclose(static_out, want, rtol=1e-5, atol=1e-5), f"replay {seed}")
        ok += 1
    return f"captured once, {ok} replays on new data equal eager"


@part("compile")
def _compile():
    def f(x, y):
        return torch.sin(x) * y + torch.relu(x).sum(dim=1, keepdim=True) / x.shape[1]

    g = torch.Generator().manual_seed(5)
    x = torch.randn(256, 128, generator=g).to(dev)
    y = torch.randn(256, 128, generator=g).to(dev)
    cf = torch.compile(f)
    got = cf(x, y)
    check(torch.allclose(got, f(x, y), rtol=1e-5, atol=1e-5), "compiled != eager")
    x2 = torch.randn(256, 128, generator=g).to(dev)
    check(torch.allclose(cf(x2, y), f(x2, y), rtol=1e-5, atol=1e-5), "second call")
    return "torch.compile (default mode) equals eager on two inputs"


@part("oom")
def _oom():
    total = torch.cuda.get_device_properties(0).total_memory
    raised = False
    try:
        torch.empty(total + (1 << 30), dtype=torch.uint8, device=dev)
    except torch.cuda.OutOfMemoryError:
        raised = True
    check(raised, "no OutOfMemoryError")
    torch.cuda.empty_cache()
    t = torch.ones(1 << 20, device=dev)
    s = int(t.sum().item())
    check(s == 1 << 20, f"sum {s}")
    return "OutOfMemoryError raised for more than the device has; a later allocation works"


def isolation():
    """Violations of this process, as isocheck.so would find them."""
    want = os.environ.get("AXON_ISOCHECK_LIBCUDA")
    if not want:
        return None
    want = os.path.realpath(want)
    nvml = os.environ.get("AXON_ISOCHECK_LIBNVML") or os.path.join(
        os.path.dirname(want), "libnvidia-ml.so.1")
    nvml = os.path.realpath(nvml) if os.path.exists(nvml) else None
    bad = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            i = line.find("/")
            if i < 0:
                continue
            path = line[i:].rstrip("\n").removesuffix(" (deleted)")
            if path.startswith("/dev/nvidia"):
                bad.append(f"maps a GPU device node: {path}")
            elif os.path.basename(path).startswith("libcuda.so") and path != want:
                bad.append(f"loaded a libcuda that is not axon's: {path}")
            elif os.path.basename(path).startswith("libnvidia-ml.so") and path != nvml:
                bad.append(f"loaded a libnvidia-ml that is not axon's: {path}")
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/dev/nvidia"):
            bad.append(f"holds fd {fd} on a GPU device node: {target}")
    return sorted(set(bad))


bad = isolation()
if bad:
    out = os.environ.get("AXON_ISOCHECK_OUT")
    lines = [f"isocheck: pid {os.getpid()} (torch_smoke.py): {b}\n" for b in bad]
    if out:
        with open(out, "a") as f:
            f.writelines(lines)
    sys.stderr.writelines(lines)
failed = [name for name, ok in results if not ok]
print(f"torch smoke: {len(results) - len(failed)} of {len(results)} parts passed"
      + (f"; failed: {' '.join(failed)}" if failed else ""), flush=True)
sys.exit(1 if failed else 0)

# SPDX-License-Identifier: MIT
"""CUDA tensors across processes (torch.multiprocessing, spawn): the parent
sends a CUDA tensor through a queue (CUDA IPC: the child opens the parent's
memory), the child reads it, writes into it in place and sends a tensor of
its own back; the parent sees the child's write and reads the child's
tensor."""
from corpus_common import check, done, need

torch = need("torch")
import torch.multiprocessing as mp  # noqa: E402


def child(inq, outq):
    t = inq.get()
    s = t.sum().item()
    t.mul_(2)  # in place, in the parent's memory
    torch.cuda.synchronize()
    mine = torch.arange(100, dtype=torch.float64, device="cuda")
    outq.put((s, mine))
    inq.get()  # keep `mine` alive until the parent has read it


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    inq, outq = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=child, args=(inq, outq))
    p.start()
    t = torch.arange(1000, dtype=torch.float32, device="cuda")
    inq.put(t)
    s, mine = outq.get(timeout=60)
    check("child read the parent's tensor", s == 499500.0, f"child saw sum {s}")
    check("parent sees the child's in-place write", t.sum().item() == 999000.0,
          f"sum {t.sum().item()}")
    check("parent reads the child's tensor", mine.sum().item() == 4950.0)
    del mine
    inq.put(None)
    p.join(60)
    check("child exited 0", p.exitcode == 0, f"exit code {p.exitcode}")
    done()

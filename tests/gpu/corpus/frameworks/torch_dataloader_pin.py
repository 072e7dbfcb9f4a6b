# SPDX-License-Identifier: MIT
"""A DataLoader with pin_memory=True and two worker processes: batches come
pinned, go to the GPU with non_blocking copies, and their GPU sums add up to
the CPU's."""
from corpus_common import check, done, need

torch = need("torch")
from torch.utils.data import DataLoader, Dataset  # noqa: E402


class Items(Dataset):
    """Item i: 4096 integers from a generator seeded with i (exact sums)."""

    def __len__(self):
        return 512

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, 1000, (4096,), generator=g, dtype=torch.int64), i


if __name__ == "__main__":
    loader = DataLoader(Items(), batch_size=32, num_workers=2, pin_memory=True)
    total = torch.zeros((), dtype=torch.int64, device="cuda")
    pinned = batches = 0
    seen = 0
    for x, idx in loader:
        pinned += x.is_pinned()
        batches += 1
        xd = x.to("cuda", non_blocking=True)
        total += xd.sum()
        seen += int(idx.sum())
    torch.cuda.synchronize()
    ref = sum(int(Items()[i][0].sum()) for i in range(512))
    check("every batch pinned", pinned == batches, f"{pinned} of {batches}")
    check("every item once", seen == 511 * 512 // 2)
    check("GPU sum equals CPU sum", int(total.item()) == ref, f"{int(total.item())} != {ref}")
    print(f"batches {batches}, sum {ref}")
    done()

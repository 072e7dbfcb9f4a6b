# SPDX-License-Identifier: MIT
"""torch.compile (Inductor, Triton kernels built in this run: the runner
gives each run fresh TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR): a fused
pointwise-and-reduction function and an MLP's forward and backward, each
against eager."""
from corpus_common import check, done, need, sig

torch = need("torch")
import torch.nn as nn  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False


def fused(x, y):
    return (torch.sin(x) * torch.sigmoid(y) + x * y).sum(dim=-1) / (1 + y.abs().mean())


g = torch.Generator(device="cuda").manual_seed(4)
x = torch.randn(512, 1000, device="cuda", generator=g)
y = torch.randn(512, 1000, device="cuda", generator=g)
cf = torch.compile(fused)
out = cf(x, y)
check("compiled pointwise+reduction vs eager", torch.allclose(out, fused(x, y), rtol=1e-4, atol=1e-4))
print(f"fused sum: {sig(out.sum().item(), 3)}")

torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.LayerNorm(512), nn.Linear(512, 10)).cuda()
cmlp = torch.compile(mlp)
xin = torch.randn(64, 256, device="cuda", generator=g)
ye = mlp(xin)
ye.sum().backward()
ge = [p.grad.clone() for p in mlp.parameters()]
mlp.zero_grad()
yc = cmlp(xin)
yc.sum().backward()
check("compiled MLP forward vs eager", torch.allclose(yc, ye, rtol=1e-4, atol=1e-4))
gerr = max((p.grad - q).abs().max().item() for p, q in zip(mlp.parameters(), ge))
check("compiled MLP backward vs eager", gerr < 1e-3, f"max gradient difference {gerr}")
done()

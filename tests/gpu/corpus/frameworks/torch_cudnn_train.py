# SPDX-License-Identifier: MIT
"""PyTorch cuDNN convolution training: a small CNN (two convolutions, batch
norm, pooling, a linear head) on a fixed synthetic batch, 20 steps of SGD
with momentum, cuDNN in deterministic mode; the losses printed rounded, the
loss must fall, and the first step's input gradient matches the CPU's."""
from corpus_common import check, done, need, sig

torch = need("torch")
import torch.nn as nn  # noqa: E402

torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
check("cuDNN available", torch.backends.cudnn.is_available())


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


g = torch.Generator().manual_seed(1)
x = torch.randn(64, 3, 32, 32, generator=g)
y = torch.randint(0, 10, (64,), generator=g)

# One step's input gradient, GPU against CPU.
grads = []
for dev in ("cpu", "cuda"):
    m = model().to(dev)
    xi = x.to(dev).requires_grad_(True)
    nn.functional.cross_entropy(m(xi), y.to(dev)).backward()
    grads.append(xi.grad.cpu())
err = (grads[0] - grads[1]).abs().max().item()
check("conv backward vs CPU", err < 1e-5, f"max error {err}")

m = model().cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
xd, yd = x.cuda(), y.cuda()
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(m(xd), yd)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("losses: " + " ".join(sig(v, 3) for v in losses[::4]))
check("training lowers the loss", losses[-1] < losses[0], f"losses {losses}")
done()

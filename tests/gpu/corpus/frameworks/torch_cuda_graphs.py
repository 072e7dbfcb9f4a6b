# SPDX-License-Identifier: MIT
"""PyTorch CUDA graphs: torch.cuda.CUDAGraph capturing a whole training step
(forward, backward, SGD step) of an MLP on static tensors after warm-up on a
side stream, as PyTorch's documentation does it; 20 replays on new data
against the same 20 steps run eagerly; and torch.cuda.graphs.make_graphed_callables."""
from corpus_common import check, done, need, sig

torch = need("torch")
import torch.nn as nn  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False


def make():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1)).cuda()
    return m, torch.optim.SGD(m.parameters(), lr=0.01)


g = torch.Generator().manual_seed(2)
data = [(torch.randn(128, 64, generator=g).cuda(), torch.randn(128, 1, generator=g).cuda())
        for _ in range(20)]

m_e, opt_e = make()
eager = []
for x, y in data:
    opt_e.zero_grad(set_to_none=False)
    loss = nn.functional.mse_loss(m_e(x), y)
    loss.backward()
    opt_e.step()
    eager.append(loss.item())

m_g, opt_g = make()
sx, sy = torch.zeros(128, 64, device="cuda"), torch.zeros(128, 1, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    # warm-up: forward and backward only, so that the graph's step is the
    # first one taken, as the eager run's is
    for _ in range(3):
        opt_g.zero_grad(set_to_none=False)
        nn.functional.mse_loss(m_g(sx), sy).backward()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
# grads None at capture: the backward in the graph writes them afresh on
# every replay instead of adding to them
opt_g.zero_grad(set_to_none=True)
with torch.cuda.graph(graph):
    static_loss = nn.functional.mse_loss(m_g(sx), sy)
    static_loss.backward()
    opt_g.step()
replayed = []
for x, y in data:
    sx.copy_(x)
    sy.copy_(y)
    graph.replay()
    replayed.append(static_loss.item())
print("losses: " + " ".join(sig(v, 3) for v in replayed[::4]))
err = max(abs(a - b) for a, b in zip(eager, replayed))
check("captured training step vs eager", err < 1e-4, f"max loss difference {err}")
perr = max((a - b).abs().max().item() for a, b in zip(m_e.parameters(), m_g.parameters()))
check("parameters after 20 replays vs eager", perr < 1e-4, f"max difference {perr}")

mlp = nn.Sequential(nn.Linear(32, 32), nn.Tanh()).cuda()
xin = torch.randn(16, 32, device="cuda", requires_grad=True)
graphed = torch.cuda.make_graphed_callables(mlp, (xin,))
# (the inputs' requires_grad must be the sample's)
xt = torch.randn(16, 32, device="cuda", generator=torch.Generator(device="cuda").manual_seed(3))
xt.requires_grad_(True)
check("make_graphed_callables", torch.allclose(graphed(xt), mlp(xt), atol=1e-6))
done()

# SPDX-License-Identifier: MIT
"""PyTorch scaled-dot-product attention on the GPU: each fused backend
(flash, memory-efficient, cuDNN) and the math one, in float16 and bfloat16,
causal and not, forward and backward, against float32 math attention; each
backend that refuses the shape says so (the same natively and through
axon)."""
from corpus_common import check, done, need, sig

torch = need("torch")
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

g = torch.Generator(device="cuda").manual_seed(5)
B, H, L, D = 2, 8, 256, 64
q32, k32, v32 = (torch.randn(B, H, L, D, device="cuda", generator=g) for _ in range(3))
backends = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION), ("math", SDPBackend.MATH)]
for causal in (False, True):
    qr, kr, vr = (t.clone().requires_grad_(True) for t in (q32, k32, v32))
    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
    ref.sum().backward()
    print(f"causal={causal} reference sum: {sig(ref.sum().item(), 3)}")
    for dtype in (torch.float16, torch.bfloat16):
        tol = 2e-2 if dtype == torch.float16 else 6e-2
        for bname, backend in backends:
            name = f"{bname} {str(dtype)[6:]} causal={causal}"
            q, k, v = (t.to(dtype).requires_grad_(True) for t in (q32, k32, v32))
            try:
                with sdpa_kernel([backend]):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    o.float().sum().backward()
            except RuntimeError as e:
                print(f"{name}: not available ({str(e).splitlines()[0][:60]})")
                continue
            ferr = (o.float() - ref).abs().max().item()
            gerr = max((a.grad.float() - b.grad).abs().max().item() /
                       max(b.grad.abs().max().item(), 1e-6) for a, b in ((q, qr), (k, kr), (v, vr)))
            check(name, ferr < tol and gerr < 5 * tol, f"forward error {ferr}, gradient error {gerr}")
done()

# SPDX-License-Identifier: MIT
"""transformers: a small GPT-2 made from a GPT2Config (no download: random
weights, seeded), trained 8 steps with AdamW on a fixed synthetic token
batch, deterministic algorithms on; the losses printed rounded, the loss
must fall; then greedy generation of 16 tokens."""
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from corpus_common import check, done, need, sig  # noqa: E402

torch = need("torch")
transformers = need("transformers")

# warn_only: an op without a deterministic CUDA form warns (on stderr, the
# same in both runs) instead of stopping the program
torch.use_deterministic_algorithms(True, warn_only=True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)
cfg = transformers.GPT2Config(vocab_size=1000, n_positions=128, n_embd=128, n_layer=2,
                              n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").cuda()
g = torch.Generator().manual_seed(1)
# a learnable pattern: token t+1 = (token t * 7 + 3) mod 1000
start = torch.randint(0, 1000, (16, 1), generator=g)
seq = [start]
for _ in range(63):
    seq.append((seq[-1] * 7 + 3) % 1000)
ids = torch.cat(seq, dim=1).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
losses = []
model.train()
for _ in range(8):
    opt.zero_grad()
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("losses: " + " ".join(sig(v, 3) for v in losses))
check("training lowers the loss", losses[-1] < losses[0], f"losses {losses}")
model.eval()
with torch.no_grad():
    out = model.generate(ids[:1, :8], max_new_tokens=16, do_sample=False,
                         pad_token_id=0)
check("generate", out.shape == (1, 24), f"shape {tuple(out.shape)}")
done()

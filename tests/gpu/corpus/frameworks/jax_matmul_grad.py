# SPDX-License-Identifier: MIT
"""JAX on the GPU: a float32 matmul against NumPy in float64, and jit(grad)
of a least-squares loss: the gradient against its closed form, then ten
steps of gradient descent whose losses are printed rounded. JAX's defaults
otherwise (it preallocates most of the device's memory)."""
from corpus_common import check, done, need, sig

np = need("numpy")

jax = need("jax")
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")
dev = jax.devices()[0]
print(f"device platform: {dev.platform}")
check("on the GPU", dev.platform == "gpu", f"devices {jax.devices()}")

rng = np.random.default_rng(7)
a = rng.standard_normal((1024, 768), dtype=np.float32)
b = rng.standard_normal((768, 512), dtype=np.float32)
c = np.asarray(jax.device_put(a, dev) @ jax.device_put(b, dev))
ref = a.astype(np.float64) @ b.astype(np.float64)
err = np.max(np.abs(c - ref)) / np.max(np.abs(ref))
check("matmul 1024x768x512 float32 vs float64", err < 1e-5, f"relative error {err}")
print(f"matmul sum of squares: {sig(np.sum(ref ** 2), 6)}")

x = rng.standard_normal((4096, 64), dtype=np.float32)
w_true = rng.standard_normal((64,), dtype=np.float32)
y = x @ w_true + 0.01 * rng.standard_normal((4096,), dtype=np.float32)
xd, yd = jnp.asarray(x), jnp.asarray(y)


def loss(w):
    r = xd @ w - yd
    return jnp.mean(r * r)


grad = jax.jit(jax.grad(loss))
w = jnp.zeros((64,), jnp.float32)
g = np.asarray(grad(w))
g_ref = (2.0 / len(y)) * x.astype(np.float64).T @ (x.astype(np.float64) @ np.zeros(64) - y)
gerr = np.max(np.abs(g - g_ref)) / np.max(np.abs(g_ref))
check("jit(grad) vs closed form", gerr < 1e-4, f"relative error {gerr}")
step = jax.jit(lambda w: w - 0.1 * jax.grad(loss)(w))
losses = []
for i in range(10):
    w = step(w)
    losses.append(float(loss(w)))
print("losses: " + " ".join(sig(v, 3) for v in losses))
check("descent lowers the loss tenfold", losses[-1] < losses[0] / 10, f"losses {losses}")
done()

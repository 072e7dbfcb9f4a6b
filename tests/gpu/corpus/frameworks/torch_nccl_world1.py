# SPDX-License-Identifier: MIT
"""torch.distributed with the NCCL backend, world size 1 (one process, one
GPU; rendezvous through a FileStore in the run's temporary directory, no
port): all_reduce, broadcast, all_gather and reduce_scatter of CUDA tensors,
and a barrier. NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 are
set here too: NVLink multicast can put a shared host's GPUs out of service."""
import os
import tempfile

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

from corpus_common import check, done, need  # noqa: E402

torch = need("torch")
import torch.distributed as dist  # noqa: E402

check("NCCL available", dist.is_nccl_available())
store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
dist.init_process_group("nccl", store=store, rank=0, world_size=1,
                        device_id=torch.device("cuda", 0))
t = torch.arange(1024, dtype=torch.float32, device="cuda")
dist.all_reduce(t)
check("all_reduce", torch.equal(t.cpu(), torch.arange(1024, dtype=torch.float32)))
b = torch.full((16,), 3.0, device="cuda")
dist.broadcast(b, src=0)
check("broadcast", b.sum().item() == 48.0)
parts = [torch.empty(8, device="cuda")]
dist.all_gather(parts, torch.ones(8, device="cuda") * 2)
check("all_gather", parts[0].sum().item() == 16.0)
out = torch.empty(8, device="cuda")
dist.reduce_scatter(out, [torch.ones(8, device="cuda") * 5])
check("reduce_scatter", out.sum().item() == 40.0)
dist.barrier()
print(f"world size {dist.get_world_size()}, backend {dist.get_backend()}")
dist.destroy_process_group()
done()

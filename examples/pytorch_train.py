"""A small PyTorch training loop to try the runtime on a real GPU.

    pm2lat run --targets H100,A100 -- python examples/pytorch_train.py
    # or, by hand:
    LD_PRELOAD=build/default/shim/libpm2lat.so PM2LAT_TARGETS=H100,A100 \
        PM2LAT_OUT=pm2lat-out/ python examples/pytorch_train.py

It exercises the kernel families the runtime records: cuBLAS/cuBLASLt GEMMs (linear layers,
bf16 autocast), cuDNN convolutions, ATen elementwise/reduction/softmax/layer-norm kernels,
optionally torch.compile (Triton) and CUDA graphs.
"""
import argparse
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self, dim=512, heads=8, layers=4, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, kernel_size=8, stride=8)  # cuDNN
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.head = nn.Linear(dim, classes)

    def forward(self, images):
        x = self.stem(images).flatten(2).transpose(1, 2)
        return self.head(self.blocks(x).mean(dim=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--compile", action="store_true", help="torch.compile (Triton kernels)")
    parser.add_argument("--graphs", action="store_true", help="CUDA graphs (mode=reduce-overhead)")
    args = parser.parse_args()

    device = torch.device("cuda")
    model = Model().to(device)
    if args.compile or args.graphs:
        model = torch.compile(model, mode="reduce-overhead" if args.graphs else "default")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    images = torch.randn(args.batch, 3, 128, 128, device=device)
    labels = torch.randint(0, 10, (args.batch,), device=device)

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"steps {args.steps} time_s {elapsed:.3f} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

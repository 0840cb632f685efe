"""A small GPT in the shape of nanoGPT's model.py: token and position
embeddings, pre-norm blocks of causal self-attention and a GELU MLP, a final
LayerNorm and a head tied to the token embedding, cross-entropy on the next
token. Written out (no fused attention kernel) so that the exporter traces
it into the DAG's ops."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, mask):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads, self.mask = heads, mask
        # True: PyTorch's fused attention (F.scaled_dot_product_attention,
        # flash attention on the GPU), as nanoGPT runs; the same function.
        # The exporter traces the written-out form (flash False).
        self.flash = False

    def attention(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        shape = (B, T, self.heads, C // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            a = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            a = a.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(dim=-1)
            y = a @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, block_size=32, layers=2, heads=2, d=64):
        super().__init__()
        # The causal mask, a captured constant of the step (block_size^2).
        mask = torch.tril(torch.ones(block_size, block_size)).bool()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block_size, d)
        self.blocks = nn.ModuleList(Block(d, heads, mask) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied, as nanoGPT's
        self.vocab = vocab
        self.apply(self._init)

    @staticmethod
    def _init(m):
        """nanoGPT's initialization: N(0, 0.02) weights, zero biases."""
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def loss_fn(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

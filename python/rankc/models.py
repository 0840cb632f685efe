"""Small models to try the exporter on (scripts/export_torch.py MODEL)."""
import torch


class MLP(torch.nn.Module):
    def __init__(self, sizes=(16, 32, 32, 4)):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x


class TransformerBlock(torch.nn.Module):
    """Pre-norm attention and GELU MLP with residuals, written with the ops
    a transformer block is made of (layer norm, attention, softmax, GELU)."""

    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.ln1(x)
        scores = torch.matmul(self.q(h), self.k(h).transpose(-2, -1)) * self.scale
        x = x + self.o(torch.matmul(torch.softmax(scores, dim=-1), self.v(h)))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


MODELS = {
    "mlp": lambda: (MLP(), torch.randn(8, 16)),
    "mlp-large": lambda: (MLP((512, 1024, 1024, 1024, 1024, 16)), torch.randn(64, 512)),
    "transformer": lambda: (TransformerBlock(), torch.randn(2, 5, 16)),
    "transformer-large": lambda: (TransformerBlock(256, 1024), torch.randn(4, 64, 256)),
    "transformer-xl": lambda: (TransformerBlock(1024, 4096), torch.randn(8, 256, 1024)),
    "mlp-wide": lambda: (MLP((1024, 4096, 4096, 1024)), torch.randn(512, 1024)),
}

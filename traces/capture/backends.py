"""Models the capture runs: the kvtier checkpoint (kvtier-model.json) or any local Hugging Face
causal-LM directory (config.json + weights), loaded with eager attention so that every layer's
attention probabilities come back (output_attentions=True).

A backend has: layers, n_heads, n_kv_heads, encode/decode (None without a tokenizer), bos_id,
reset(), and step(ids [1, C]) -> (logits [C, V] float32, probs per layer [H, C, T], key norms per
layer [KV, C]) over its own KV cache.
"""
import json
import os

import torch

from checkpoint import is_checkpoint, load_checkpoint, sha256_file


class KvtierBackend:
    def __init__(self, path: str, device: str):
        self.model, self.tok, self.manifest = load_checkpoint(path, device)
        c = self.model.cfg
        self.layers, self.n_heads, self.n_kv_heads = c.layers, c.n_heads, c.n_kv_heads
        self.encode, self.decode, self.bos_id = self.tok.encode, self.tok.decode, self.tok.bos_id
        self.vocab_size = c.vocab_size
        self.describe = {'kind': 'kvtier-gpt', 'path': os.path.basename(os.path.normpath(path)), 'sha256': self.manifest['sha256'],
                         'params': self.manifest['params'], 'config': c.to_dict(), 'weights_dtype': self.manifest['dtype']}
        self.device = device
        self.reset()

    def reset(self):
        self.cache = self.model.new_cache()

    @torch.no_grad()
    def step(self, ids):
        return self.model.step(ids.to(self.device), self.cache)


def _cache_keys(cache, layer: int):
    """Keys [B, KV, T, D] of one layer from any transformers cache flavour."""
    if hasattr(cache, 'layers') and len(getattr(cache, 'layers')) > layer and hasattr(cache.layers[layer], 'keys'):
        return cache.layers[layer].keys  # transformers >= 4.56 / 5.x
    if hasattr(cache, 'key_cache'):
        return cache.key_cache[layer]
    return cache[layer][0]  # legacy tuple of (key, value)


class HFBackend:
    def __init__(self, path: str, device: str, dtype: str):
        try:
            import transformers
            from transformers import AutoModelForCausalLM
        except ImportError as e:
            raise SystemExit(f'--model {path}: a Hugging Face checkpoint needs the transformers package ({e})')
        td = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
        try:
            model = AutoModelForCausalLM.from_pretrained(path, dtype=td, attn_implementation='eager')
        except TypeError:
            model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=td, attn_implementation='eager')
        self.model = model.to(device).eval()
        cfg = model.config
        self.layers = cfg.num_hidden_layers
        self.n_heads = cfg.num_attention_heads
        self.n_kv_heads = getattr(cfg, 'num_key_value_heads', None) or self.n_heads
        self.vocab_size = cfg.vocab_size
        self.encode = self.decode = None
        self.bos_id = getattr(cfg, 'bos_token_id', None)
        try:
            from transformers import AutoTokenizer
            tk = AutoTokenizer.from_pretrained(path)
            self.encode = lambda text: tk.encode(text, add_special_tokens=False)
            self.decode = lambda ids: tk.decode(ids)
            self.bos_id = tk.bos_token_id
        except Exception:  # a bare config + weights (e.g. a randomly initialised test model) has no tokenizer
            pass
        files = sorted(f for f in os.listdir(path) if f.endswith(('.safetensors', '.bin')))
        self.describe = {'kind': 'huggingface', 'path': os.path.basename(os.path.normpath(path)),
                         'architecture': (cfg.architectures or [type(model).__name__])[0],
                         'weights_sha256': {f: sha256_file(os.path.join(path, f)) for f in files},
                         'params': sum(p.numel() for p in model.parameters()), 'dtype': dtype,
                         'transformers': transformers.__version__,
                         'config': json.loads(cfg.to_json_string())}
        self.device = device
        self.reset()

    def reset(self):
        self.cache = None

    @torch.no_grad()
    def step(self, ids):
        out = self.model(input_ids=ids.to(self.device), past_key_values=self.cache, use_cache=True, output_attentions=True)
        self.cache = out.past_key_values
        if out.attentions is None or any(a is None for a in out.attentions):
            raise SystemExit('the model returned no attention probabilities (it needs eager attention)')
        n = ids.shape[1]
        norms = [_cache_keys(self.cache, l)[0, :, -n:, :].float().norm(dim=-1) for l in range(self.layers)]
        return out.logits[0].float(), [a[0].float() for a in out.attentions], norms


def load_backend(path: str, device: str, dtype: str = 'float32'):
    if is_checkpoint(path):
        return KvtierBackend(path, device)
    if os.path.isfile(os.path.join(path, 'config.json')):
        return HFBackend(path, device, dtype)
    raise SystemExit(f'--model {path}: neither a kvtier checkpoint (kvtier-model.json) nor a Hugging Face model directory (config.json)')

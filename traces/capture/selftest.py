"""Consistency checks of the capture path (run by the tests on CPU and on the GPU machine):

  - cached decoding gives the same attention probabilities as one pass over the whole sequence
    (chunked prefill + one decode step vs a single prefill), for any backend;
  - the kvtier model's capture path (explicit softmax over the cache) gives the training path's
    logits (fused attention where torch has it);
  - with --kvtier-tiny DIR: first save a tiny randomly initialised kvtier checkpoint in DIR;
  - with --hf-tiny DIR: build a tiny randomly initialised Llama (GQA) with transformers, save it with
    save_pretrained into DIR, and run the same checks on it through --model DIR.
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from backends import load_backend  # noqa: E402


def cache_consistency(be, vocab: int, n: int = 150, chunk: int = 64, seed: int = 0) -> float:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (1, n + 1), generator=g)
    be.reset()
    for pos in range(0, n, chunk):
        be.step(ids[:, pos:min(n, pos + chunk)])
    _, p_dec, k_dec = be.step(ids[:, n:n + 1])
    be.reset()
    _, p_full, k_full = be.step(ids)
    err = max(float((a[:, -1, :] - b[:, -1, :]).abs().max()) for a, b in zip(p_dec, p_full))
    err_k = max(float((a[:, -1] - b[:, -1]).abs().max() / b[:, -1].abs().max()) for a, b in zip(k_dec, k_full))
    return max(err, err_k)


def make_hf_tiny(path: str) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)
    LlamaForCausalLM(cfg).save_pretrained(path)


def make_kvtier_tiny(path: str, seed: int = 0) -> None:
    """A randomly initialised 2-layer kvtier GPT (4 query / 2 KV heads) with a small word vocabulary."""
    from checkpoint import save_checkpoint
    from model import GPT, GPTConfig
    from tokenizer import WordTokenizer
    torch.manual_seed(seed)
    text = 'the quick brown fox jumps over the lazy dog . a pass key is a number to remember .'
    tok = WordTokenizer.build([text], 64)
    model = GPT(GPTConfig(vocab_size=len(tok), layers=2, d_model=32, n_heads=4, n_kv_heads=2, ffn_hidden=64, max_seq=4096))
    save_checkpoint(model, tok, path, {'recipe': None, 'note': 'random initialisation (test model)'})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', help='a kvtier checkpoint or HF directory to check')
    ap.add_argument('--hf-tiny', help='create a tiny random Llama here and check it')
    ap.add_argument('--kvtier-tiny', help='create a tiny random kvtier checkpoint here (and check it)')
    ap.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    a = ap.parse_args()
    if a.kvtier_tiny:
        make_kvtier_tiny(a.kvtier_tiny)
        a.model = a.kvtier_tiny
    if a.hf_tiny:
        make_hf_tiny(a.hf_tiny)
        a.model = a.hf_tiny
    be = load_backend(a.model, a.device)
    err = cache_consistency(be, be.vocab_size)
    print(f'{a.model}: cached vs full attention max |diff| = {err:.2e}')
    ok = err < 1e-4
    if hasattr(be, 'model') and hasattr(be.model, 'new_cache'):
        ids = torch.randint(0, be.vocab_size, (1, 100), generator=torch.Generator().manual_seed(1)).to(a.device)
        with torch.no_grad():
            train_logits = be.model(ids)[0].float()
            cap_logits, _, _ = be.model.step(ids, be.model.new_cache())
        rel = float((train_logits - cap_logits).norm() / train_logits.norm())
        print(f'{a.model}: capture vs training logits relative error = {rel:.2e}')
        ok = ok and rel < 1e-3
    print('selftest', 'ok' if ok else 'FAILED')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()

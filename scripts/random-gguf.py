#!/usr/bin/env python3
"""Write a GGUF model with random weights in the shape of a real one.

Speed does not depend on weight values and the exactness checks hold for any
weights, so a random model of a real architecture measures what a real one
would wherever model files cannot travel (the GPU machine). The vocabulary is
synthetic: three specials, ChatML's two control tokens, the 256 byte tokens
(so any text tokenizes, one token per byte) and fillers up to the real size.

usage: random-gguf.py SHAPE OUT.gguf      (needs the `gguf` and `numpy` packages)
shapes: llama3-8b, qwen2.5-0.5b, tiny-llama, tiny-qwen2
"""
import sys

import numpy as np
import gguf

SHAPES = {
    # arch, vocab, embd, layers, heads, kv heads, ffn, context, rope base, eps
    "llama3-8b": ("llama", 128256, 4096, 32, 32, 8, 14336, 131072, 500000.0, 1e-5),
    "qwen2.5-0.5b": ("qwen2", 151936, 896, 24, 14, 2, 4864, 32768, 1000000.0, 1e-6),
    "tiny-llama": ("llama", 512, 256, 4, 4, 2, 512, 4096, 10000.0, 1e-5),
    "tiny-qwen2": ("qwen2", 512, 256, 4, 4, 2, 512, 4096, 10000.0, 1e-6),
}
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def vocab(n):
    T = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    types = [T.UNKNOWN, T.CONTROL, T.CONTROL, T.CONTROL, T.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [T.BYTE] * 256
    tokens += [f"[filler {i}]" for i in range(n - len(tokens))]
    types += [T.NORMAL] * (n - len(types))
    return tokens, [0.0] * n, types


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES:
        sys.exit(__doc__)
    shape, out = sys.argv[1], sys.argv[2]
    arch, n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx, rope, eps = SHAPES[shape]
    head_dim = n_embd // n_head
    n_kv = n_head_kv * head_dim

    w = gguf.GGUFWriter(out, arch)
    w.add_name(f"random {shape}")
    w.add_context_length(n_ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_freq_base(rope)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    tokens, scores, types = vocab(n_vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(4)
    w.add_add_bos_token(True)
    w.add_chat_template(CHATML)

    rng = np.random.default_rng(0)
    cache = {}

    def weight(rows, cols):
        # One random matrix per shape, shared by every layer: the file is as
        # large as the real one, generating it is not.
        if (rows, cols) not in cache:
            cache[(rows, cols)] = (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)
        return cache[(rows, cols)]

    ones = np.ones(n_embd, dtype=np.float32)
    w.add_tensor("token_embd.weight", weight(n_vocab, n_embd))
    w.add_tensor("output_norm.weight", ones)
    w.add_tensor("output.weight", weight(n_vocab, n_embd))
    for i in range(n_layer):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", ones)
        w.add_tensor(b + "attn_q.weight", weight(n_embd, n_embd))
        w.add_tensor(b + "attn_k.weight", weight(n_kv, n_embd))
        w.add_tensor(b + "attn_v.weight", weight(n_kv, n_embd))
        if arch == "qwen2":
            w.add_tensor(b + "attn_q.bias", np.zeros(n_embd, dtype=np.float32))
            w.add_tensor(b + "attn_k.bias", np.zeros(n_kv, dtype=np.float32))
            w.add_tensor(b + "attn_v.bias", np.zeros(n_kv, dtype=np.float32))
        w.add_tensor(b + "attn_output.weight", weight(n_embd, n_embd))
        w.add_tensor(b + "ffn_norm.weight", ones)
        w.add_tensor(b + "ffn_gate.weight", weight(n_ff, n_embd))
        w.add_tensor(b + "ffn_up.weight", weight(n_ff, n_embd))
        w.add_tensor(b + "ffn_down.weight", weight(n_embd, n_ff))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()

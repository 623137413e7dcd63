"""A NumPy model against what transformers computed on the same checkpoint and text, as the
fixture scripts saved it (``reference.npz``: text_i, ids_i, attentions_i, layer_inputs_i,
hidden_i, next_logits_i, greedy_i; tests/make_model_fixtures.py, tests/make_family_fixtures.py)."""

from __future__ import annotations

import numpy as np

TOL = 1e-5  # float32 forward passes in two engines


def assert_forward_matches(model, ref, i: int) -> None:
    """Text ``i``'s attentions, layer inputs and hidden states equal transformers' eager ones."""
    result = model.run(str(ref[f"text_{i}"]))
    assert result.attentions.shape == ref[f"attentions_{i}"].shape
    np.testing.assert_allclose(result.attentions, ref[f"attentions_{i}"], rtol=0, atol=TOL)
    np.testing.assert_allclose(result.layer_inputs, ref[f"layer_inputs_{i}"], rtol=0, atol=TOL)
    np.testing.assert_allclose(result.hidden, ref[f"hidden_{i}"], rtol=0, atol=TOL)


def assert_generation_matches(model, ref, i: int) -> None:
    """Text ``i``'s next-token logits equal transformers', and greedy generation with the KV cache
    gives ``generate``'s tokens, the cache holding the prompt once, then one position per
    generated token but the last."""
    result = model.run(str(ref[f"text_{i}"]))
    logits = ref[f"next_logits_{i}"]
    np.testing.assert_allclose(result.next_logits, logits, rtol=0, atol=TOL * np.abs(logits).max())
    tokens, cache = model.generate(result.token_ids, len(ref[f"greedy_{i}"]))
    assert tokens == ref[f"greedy_{i}"].tolist()
    assert cache.length == len(result.token_ids) + len(tokens) - 1

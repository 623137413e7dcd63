"""The NumPy decoder trainer: every gradient against torch's autograd in float64, Adam
against torch.optim.Adam, the task's masks by hand, the scores on hand-made weights, determinism,
and the lesson's claim — one layer stays below 0.35 on repeated tokens, two layers pass 0.9, and
ablating the learned induction or previous-token head drops it near chance."""

from __future__ import annotations

import base64
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from visattn import training
from visattn.errors import InputError
from visattn.lessons.training import SLIDER_CHECKPOINTS
from visattn.training import DecoderConfig


# ── an independent forward pass in torch ──────────────────────────────────────────────────────
def torch_loss(params: dict, config: DecoderConfig, tokens: np.ndarray) -> torch.Tensor:
    """The same model written with torch's own layers (layer_norm, softmax, cross_entropy)."""
    B, T = tokens.shape
    H, Dh, D = config.n_heads, config.d_head, config.d_model
    ids = torch.tensor(tokens)
    x = params["embed"][ids] + params["pos"][:T]
    future = ~torch.tril(torch.ones(T, T, dtype=torch.bool))
    for layer in range(config.n_layers):
        g, b = params[f"l{layer}.ln_g"], params[f"l{layer}.ln_b"]
        h = torch.nn.functional.layer_norm(x, (D,), g, b, eps=1e-5)
        qkv = (h @ params[f"l{layer}.W_qkv"]).reshape(B, T, 3, H, Dh).permute(2, 0, 3, 1, 4)
        scores = qkv[0] @ qkv[1].transpose(-1, -2) / math.sqrt(Dh)
        weights = scores.masked_fill(future, float("-inf")).softmax(-1)
        z = (weights @ qkv[2]).permute(0, 2, 1, 3).reshape(B, T, D)
        x = x + z @ params[f"l{layer}.W_o"]
        if config.mlp:
            g2, b2 = params[f"l{layer}.ln2_g"], params[f"l{layer}.ln2_b"]
            h2 = torch.nn.functional.layer_norm(x, (D,), g2, b2, eps=1e-5)
            hidden = torch.relu(h2 @ params[f"l{layer}.W_in"] + params[f"l{layer}.mlp_in_b"])
            x = x + hidden @ params[f"l{layer}.W_out"] + params[f"l{layer}.mlp_out_b"]
    h = torch.nn.functional.layer_norm(x, (D,), params["ln_f_g"], params["ln_f_b"], eps=1e-5)
    logits = h @ params["unembed"]
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, config.vocab), ids[:, 1:].reshape(-1)
    )


def relative_error(mine: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(mine - reference).max() / max(np.abs(reference).max(), 1e-300))


def small_config(V: int, T: int, Dh: int, H: int, L: int, B: int, mlp: bool):
    return DecoderConfig(V, T, Dh * H, H, L, 2, T // 2, mlp=mlp), B


configs = st.builds(
    small_config,
    st.integers(2, 9),
    st.integers(4, 10),
    st.integers(2, 4),  # head width: LayerNorm over a width of 1 is constant
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.booleans(),  # the optional MLP block
)


@settings(max_examples=15)
@given(configs, st.integers(0, 2**16))
def test_every_gradient_matches_torch_autograd_in_float64(case, seed):
    config, batch = case
    params = training.init_params(config, seed)
    tokens = np.random.default_rng(seed).integers(0, config.vocab, size=(batch, config.seq_len))
    loss, grads = training.loss_and_grads(params, config, tokens)
    reference = {name: torch.tensor(p, requires_grad=True) for name, p in params.items()}
    expected = torch_loss(reference, config, tokens)
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-12)
    assert set(grads) == set(params)
    for name, p in params.items():
        assert grads[name].dtype == np.float64 and grads[name].shape == p.shape
        assert relative_error(grads[name], reference[name].grad.numpy()) <= 1e-8, name


@pytest.mark.parametrize("layers", [1, 2])
def test_the_optional_mlp_gradients_match_torch_autograd(layers):
    config = DecoderConfig(7, 9, 8, 2, layers, 2, 4, mlp=True)
    params = training.init_params(config, 5)
    assert params["l0.W_in"].shape == (8, 32) and params["l0.mlp_in_b"].shape == (32,)
    tokens = np.random.default_rng(5).integers(0, 7, size=(3, 9))
    loss, grads = training.loss_and_grads(params, config, tokens)
    reference = {name: torch.tensor(p, requires_grad=True) for name, p in params.items()}
    expected = torch_loss(reference, config, tokens)
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-12)
    for name in params:
        assert relative_error(grads[name], reference[name].grad.numpy()) <= 1e-8, name


def test_the_mlp_is_off_by_default_and_leaves_the_default_model_alone():
    assert not DecoderConfig().mlp
    plain = training.init_params(DecoderConfig(), 0)
    with_mlp = training.init_params(replace(DecoderConfig(), mlp=True), 0)
    assert set(plain) < set(with_mlp)
    assert {n for n in with_mlp if n not in plain} == {
        f"l{layer}.{name}"
        for layer in range(2)
        for name in ("ln2_g", "ln2_b", "W_in", "mlp_in_b", "W_out", "mlp_out_b")
    }


def test_gradients_follow_the_parameters_dtype():
    config = DecoderConfig(5, 6, 8, 2, 1, 2, 3)
    params = training.init_params(config, 0, dtype=np.float32)
    _, grads = training.loss_and_grads(params, config, np.zeros((2, 6), dtype=int))
    assert all(g.dtype == np.float32 for g in grads.values())


def test_one_adam_step_matches_torch_optim_adam():
    config = DecoderConfig(6, 8, 12, 3, 2, 2, 4)
    params = training.init_params(config, 7)
    tokens = np.random.default_rng(7).integers(0, 6, size=(3, 8))
    reference = {name: torch.tensor(p, requires_grad=True) for name, p in params.items()}
    optimiser = torch.optim.Adam(reference.values(), lr=3e-3, betas=(0.9, 0.98), eps=1e-8)
    adam = training.Adam(3e-3, 0.9, 0.98, 1e-8)
    for _ in range(3):  # three steps: the bias corrections change with t
        _, grads = training.loss_and_grads(params, config, tokens)
        adam.step(params, grads)
        optimiser.zero_grad()
        torch_loss(reference, config, tokens).backward()
        optimiser.step()
    for name, p in params.items():
        assert np.abs(p - reference[name].detach().numpy()).max() <= 1e-10, name


def test_the_learning_rate_warms_up_linearly_then_stays():
    config = DecoderConfig(lr=1e-2, warmup=100)
    assert [training.learning_rate(config, s) for s in (1, 50, 100, 101, 900)] == [
        pytest.approx(1e-4),
        pytest.approx(5e-3),
        1e-2,
        1e-2,
        1e-2,
    ]
    assert training.learning_rate(replace(config, warmup=0), 1) == 1e-2


# ── the task ──────────────────────────────────────────────────────────────────────────────────
def test_the_batch_repeats_its_first_k_tokens_with_k_in_range():
    config = DecoderConfig()
    tokens, spans = training.repeated_batch(config, np.random.default_rng(0), 200)
    assert tokens.shape == (200, config.seq_len) and tokens.max() < config.vocab
    assert spans.min() >= config.min_repeat and spans.max() <= config.max_repeat
    assert len(set(spans.tolist())) > 5  # the offset varies
    for row, k in zip(tokens, spans, strict=True):
        assert (row[k : 2 * k] == row[:k]).all()


def test_repeat_and_first_masks_by_hand():
    # k = 3, T = 8: predictions of targets 4, 5 (= k + 1 … 2k − 1) are repeated; of 1, 2 first-seen
    repeated, first = training.repeat_mask(np.array([3]), 8)
    assert repeated[0].tolist() == [False, False, False, True, True, False, False]
    assert first[0].tolist() == [True, True, False, False, False, False, False]


def test_scores_of_hand_made_heads():
    T, k = 8, 3
    previous = np.zeros((T, T))
    previous[0, 0] = 1
    previous[np.arange(1, T), np.arange(T - 1)] = 1  # every query on i − 1
    induction = np.eye(T)
    for i in range(k + 1, 2 * k):
        induction[i] = 0
        induction[i, i - k + 1] = 1  # the token after the earlier copy
    weights = np.stack([previous, induction])[None, None]  # (1, 1, 2, T, T)
    prev_score, induction_score = training.head_scores(weights, np.array([k]))
    assert prev_score[0].tolist() == [1.0, pytest.approx(0.0)]
    assert induction_score[0].tolist() == [0.0, 1.0]


def test_bad_configs_are_refused():
    with pytest.raises(InputError):
        DecoderConfig(d_model=10, n_heads=4)
    with pytest.raises(InputError):
        DecoderConfig(n_layers=4)
    with pytest.raises(InputError):
        DecoderConfig(seq_len=20, max_repeat=11)


# ── training ──────────────────────────────────────────────────────────────────────────────────
TINY = DecoderConfig(vocab=8, seq_len=12, d_model=8, n_heads=2, min_repeat=2, max_repeat=6)


def test_same_seed_gives_bit_identical_checkpoints():
    config = replace(TINY, eval_every=5, probe_batch=8, batch=4)
    first = training.train(config, seed=3, steps=20)
    again = training.train(config, seed=3, steps=20)
    other = training.train(config, seed=4, steps=20)
    assert [c.step for c in first.checkpoints] == [0, 5, 10, 15, 20]
    for a, b in zip(first.checkpoints, again.checkpoints, strict=True):
        assert all(np.array_equal(a.params[n], b.params[n]) for n in a.params)
        assert np.array_equal(a.maps, b.maps)
    assert not np.array_equal(first.params["embed"], other.params["embed"])
    columns = {"step", "loss", "repeat_accuracy", "first_accuracy", "prev_L1H1", "induction_L2H2"}
    assert columns <= set(first.history.columns)


def test_a_stop_ends_the_run_with_a_checkpoint_there():
    config = replace(TINY, eval_every=5, probe_batch=8, batch=4)
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) >= 7

    run = training.train(config, seed=0, steps=50, should_stop=stop)
    assert run.stopped and run.steps_done == 7 and run.checkpoints[-1].step == 7


def test_checkpoints_are_bounded():
    config = replace(TINY, eval_every=1)
    steps = training.checkpoint_steps(config, 500)
    assert len(steps) == training.MAX_CHECKPOINTS and steps[0] == 0 and steps[-1] == 500
    n_params = sum(math.prod(s) for s in training.param_shapes(config).values())
    assert training.checkpoint_bytes(config) == training.MAX_CHECKPOINTS * 4 * (
        n_params + 2 * 2 * 12 * 12
    )


@pytest.fixture(scope="module")
def two_runs():
    """The page's default model, 1 and 2 layers, same seed and steps (this file's seconds)."""
    config = DecoderConfig()
    return training.train(replace(config, n_layers=1)), training.train(config)


def test_two_layers_learn_to_copy_and_one_layer_cannot(two_runs):
    one, two = two_runs
    assert one.history["repeat_accuracy"].iloc[-1] < 0.35
    assert two.history["repeat_accuracy"].iloc[-1] > 0.9
    assert training.phase_change_step(two.history) is not None
    assert training.phase_change_step(one.history) is None


def test_ablating_the_learned_heads_drops_repeated_accuracy_near_chance(two_runs):
    _, two = two_runs
    found = training.ablations(two)
    assert found.intact > 0.9
    assert found.without_induction < 0.15 and found.without_previous < 0.15
    # the induction heads are in layer 2, the previous-token heads feeding them in layer 1
    assert found.induction_heads and {layer for layer, _ in found.induction_heads} == {1}
    assert found.previous_heads and {layer for layer, _ in found.previous_heads} == {0}


def test_each_learned_induction_heads_keys_read_a_previous_token_head_most(two_runs):
    _, two = two_runs
    scores = training.k_composition(two.params, two.config)  # (H, H): layer 1 × layer 2
    roles = training.head_roles(*training.final_scores(two))
    previous = {int(h) for h in np.nonzero(roles[0] == "previous")[0]}
    induction = [int(h) for h in np.nonzero(roles[1] == "induction")[0]]
    assert previous and induction
    for head in induction:
        assert int(scores[:, head].argmax()) in previous, (head, scores[:, head])
    # and above every pair's level at step 0, with random weights
    start = training.k_composition(two.checkpoints[0].params, two.config)
    assert max(scores[p, h] for p in previous for h in induction) > start.max()


def test_roles_by_hand():
    previous = np.array([[0.5, 0.05], [0.6, 0.0]])
    induction = np.array([[0.9, 0.0], [0.1, 0.3]])
    # a first-layer head is never an induction head; a head after the induction layer is not
    # named previous
    assert training.head_roles(previous, induction).tolist() == [
        ["previous", "other"],
        ["other", "induction"],
    ]


# ── composition ───────────────────────────────────────────────────────────────────────────
def k_composition_by_loops(params: dict, config: DecoderConfig) -> np.ndarray:
    """The K-composition scores of layer 1's heads with layer 2's, head by head in torch, each
    matrix sliced out of W_qkv's and W_o's columns and rows directly."""
    D, H, Dh = config.d_model, config.n_heads, config.d_head
    qkv = [torch.tensor(params[f"l{layer}.W_qkv"]) for layer in (0, 1)]
    W_o = torch.tensor(params["l0.W_o"])
    scores = np.zeros((H, H))
    for h1 in range(H):
        cut = slice(h1 * Dh, (h1 + 1) * Dh)
        W_V = qkv[0][:, 2 * D :][:, cut]  # (D, Dh)
        W_OV = W_V @ W_o[cut, :]  # (D, D)
        for h2 in range(H):
            cut2 = slice(h2 * Dh, (h2 + 1) * Dh)
            W_QK = qkv[1][:, :D][:, cut2] @ qkv[1][:, D : 2 * D][:, cut2].T  # (D, D)
            # h1's output x W_OV as the key: x_q W_QK (x W_OV)ᵀ
            product = torch.linalg.matrix_norm(W_QK @ W_OV.T)
            norms = torch.linalg.matrix_norm(W_OV) * torch.linalg.matrix_norm(W_QK)
            scores[h1, h2] = (product / norms).item()
    return scores


@settings(max_examples=10)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**16))
def test_k_composition_matches_a_head_by_head_computation(H, Dh, seed):
    config = DecoderConfig(5, 6, H * Dh, H, 2, 2, 3)
    params = training.init_params(config, seed)
    scores = training.k_composition(params, config)
    assert scores.shape == (H, H)
    assert np.allclose(scores, k_composition_by_loops(params, config), rtol=1e-12, atol=0)
    assert (scores >= 0).all() and (scores <= 1 + 1e-12).all()  # ‖AB‖ ≤ ‖A‖ ‖B‖


def test_a_head_writing_where_no_key_reads_does_not_compose():
    config = DecoderConfig(5, 6, 4, 2, 2, 2, 3)
    params = training.init_params(config, 0)
    # layer 1's head 1 writes only into dimension 0; layer 2's head 2 keys read only dimension 3
    params["l0.W_o"][:2, 1:] = 0  # head 1's rows of W_o
    params["l1.W_qkv"][:3, 4 + 2 : 4 + 4] = 0
    scores = training.k_composition(params, config)
    assert scores[0, 1] == 0 and scores[0, 0] > 0


# ── the figures ───────────────────────────────────────────────────────────────────────────────
def test_the_training_figures_are_valid_plotly_and_the_slider_replays_every_checkpoint():
    import plotly.graph_objects as go

    from visattn.figures import training as training_figures

    config = replace(TINY, eval_every=5, probe_batch=8, batch=4)
    run = training.train(config, seed=1, steps=20)
    steps = run.history["step"].to_numpy()
    curves = training_figures.training_curves(
        steps,
        run.history["loss"],
        steps * 0,
        steps * 0,
        total_steps=20,
        chance=0.125,
        phase_step=10,
    )
    names = training.head_names(config)
    previous = run.history[[f"prev_{n}" for n in names]].to_numpy()
    scores = training_figures.score_curves(
        steps, previous, previous, names, total_steps=20, phase_step=10
    )
    maps = np.stack([c.maps for c in run.checkpoints])  # (C, L, H, T, T)
    steps_kept = [c.step for c in run.checkpoints]
    grid = training_figures.checkpoint_maps(maps, steps_kept, list("abcdefghijkl"), names)
    compare = training_figures.layer_comparison(
        {1: (steps, steps * 0)}, total_steps=20, chance=0.125
    )
    composition = training_figures.composition_map(
        np.ones((2, 2)), ["a", "b"], ["c", "d"], marked=[(0, 1)]
    )
    own = training_figures.own_induction_map(np.eye(3), ["t1", "t2", "t1"])
    for fig in (curves, scores, grid, compare, composition, own):
        go.Figure(fig.to_plotly_json())  # Plotly's own validation
    assert compare.data[0].name == "1 layer(s)"  # the run named by its layers
    (slider,) = grid.layout.sliders
    assert [s["label"] for s in slider["steps"]] == ["0", "5", "10", "15", "20"]
    # the slider is the control dec_tcheck: each step's value its training step
    assert slider["name"] == "dec_tcheck"
    assert [s["value"] for s in slider["steps"]] == ["0", "5", "10", "15", "20"]
    assert slider["active"] == 4 and len(grid.data) == 4  # 2 layers × 2 heads, the last by default
    first = slider["steps"][0]["args"][0]["z"]  # every head's map at step 0
    z = np.frombuffer(base64.b64decode(first[3]["bdata"]), dtype=np.float32).reshape(12, 12)
    assert np.array_equal(z, maps[0, 1, 1].astype(np.float32))  # float32 typed arrays
    # opened at a checkpoint, or at the nearest one (the later of two as near)
    for checkpoint, active in ((10, 2), (0, 0), (7, 1), (13, 3), (12.5, 3), (999, 4), (-1, 4)):
        opened = training_figures.checkpoint_maps(
            maps, steps_kept, list("abcdefghijkl"), names, checkpoint=checkpoint
        )
        assert opened.layout.sliders[0]["active"] == active, checkpoint
        drawn = opened.to_plotly_json()["data"][3]["z"]  # a float32 typed array, as sent
        z = np.frombuffer(base64.b64decode(drawn["bdata"]), dtype=np.float32).reshape(12, 12)
        assert np.array_equal(z, maps[active, 1, 1].astype(np.float32))
    long = np.zeros((50, 1, 1, 2, 2))  # 50 checkpoints: at most SLIDER_CHECKPOINTS on the slider
    many = training_figures.checkpoint_maps(long, list(range(50)), ["a", "b"], ["h"])
    labels = [s["label"] for s in many.layout.sliders[0]["steps"]]
    assert len(labels) == SLIDER_CHECKPOINTS == 21 and labels[0] == "0" and labels[-1] == "49"


def test_the_trained_model_copies_the_readers_own_sequence(two_runs):
    from visattn.lessons import training as lesson

    section = lesson.training_section(two_runs[1])
    own = lesson.own_sequence(section, "3 14 15 9 26 5 3 14 15 9 26")
    assert own.n_seen == 4  # 3 → 14, 14 → 15, 15 → 9, 9 → 26 continue the earlier copy
    assert own.accuracy_seen >= 0.75
    assert own.rows[0] == (1, 3, 14, own.guesses[0], own.guesses[0] == 14)
    assert own.induction_map.shape == (11, 11)
    for bad in ("7", "1 2 x", "1 64", " ".join(["1"] * 49)):
        with pytest.raises(InputError):
            lesson.own_sequence(section, bad)


def test_even_attention_scores_by_hand():
    # T = 4, every span k = 2: previous = mean(1/2, 1/3, 1/4); prefix: query 3 on key 2 → 1/4
    config = DecoderConfig(vocab=5, seq_len=4, d_model=4, n_heads=1, min_repeat=2, max_repeat=2)
    previous, prefix = training.uniform_scores(config)
    assert previous == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert prefix == pytest.approx(1 / 4)

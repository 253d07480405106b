import numpy as np
import pytest
import torch

import posenc_lib as pe


def test_adds_one_row_per_position():
    torch.manual_seed(0)
    module = pe.LearnedPositionalEmbedding(4, 8)  # d_model first, like SinusoidalPositionalEncoding
    assert module.weight.shape == (8, 4) and module.max_len == 8 and module.d_model == 4
    x = torch.randn(3, 5, 4)
    torch.testing.assert_close(module(x), x + module.weight[:5])
    torch.testing.assert_close(module(x, offset=2), x + module.weight[2:7])
    torch.testing.assert_close(module(x, offset=np.int64(3)), x + module.weight[3:8])  # numpy integers are integers
    torch.testing.assert_close(module(x[0]), x[0] + module.weight[:5])  # (s, d) works too


def test_init_std_sets_the_spread_and_zero_is_allowed():
    torch.manual_seed(0)
    assert abs(pe.LearnedPositionalEmbedding(64, 512, init_std=0.5).weight.std().item() - 0.5) < 0.01
    assert abs(pe.LearnedPositionalEmbedding(64, 512).weight.std().item() - 0.02) < 0.001
    assert torch.all(pe.LearnedPositionalEmbedding(4, 8, init_std=0).weight == 0)


def test_gradients_reach_only_used_rows():
    module = pe.LearnedPositionalEmbedding(4, 8)
    module(torch.zeros(1, 3, 4)).sum().backward()
    grad = module.weight.grad
    assert torch.all(grad[:3] == 1) and torch.all(grad[3:] == 0)


def test_past_max_len_is_a_clear_value_error_not_index_error():
    module = pe.LearnedPositionalEmbedding(4, 512)
    module(torch.zeros(1, 512, 4))  # the last position still works
    with pytest.raises(ValueError, match=r"position 599 requested.*max_len=512"):
        module(torch.zeros(1, 600, 4))
    with pytest.raises(ValueError, match=r"position 512 requested"):
        module(torch.zeros(1, 2, 4), offset=511)
    with pytest.raises(ValueError, match="offset"):
        module(torch.zeros(1, 2, 4), offset=-1)


def test_integer_input_and_bool_offset_are_refused():
    module = pe.LearnedPositionalEmbedding(4, 8)
    with pytest.raises(TypeError, match="x must be a floating-point"):
        module(torch.zeros(1, 3, 4, dtype=torch.int64))
    with pytest.raises(TypeError, match="offset"):
        module(torch.zeros(1, 3, 4), offset=True)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_output_keeps_the_input_dtype(dtype):
    module = pe.LearnedPositionalEmbedding(4, 8)
    x = torch.randn(2, 5, 4)
    torch.testing.assert_close(module(x.to(dtype)), (x + module.weight[:5]).detach().to(dtype), atol=2e-2, rtol=2e-2)
    assert module(x.to(dtype)).dtype == dtype
    moved = pe.LearnedPositionalEmbedding(4, 8).to(dtype)
    assert moved(x.to(dtype)).dtype == dtype


def test_meta_device():
    module = pe.LearnedPositionalEmbedding(4, 8).to("meta")
    out = module(torch.empty(2, 5, 4, device="meta"), offset=3)
    assert out.device.type == "meta" and out.shape == (2, 5, 4)
    with pytest.raises(ValueError, match="position 8 requested"):  # the check needs no values
        module(torch.empty(2, 5, 4, device="meta"), offset=4)
    assert pe.cosine_similarity_matrix(torch.empty(6, 4, device="meta")).shape == (6, 6)
    assert pe.position_targets(4, 6, target_width=1.0, device="meta").device.type == "meta"


def test_position_targets_rows_are_distributions():
    for width in (0.0, 1e-30, 1e-300, 0.7, 3.0):
        targets = pe.position_targets(5, 8, target_width=width)
        assert torch.isfinite(targets).all(), width
        torch.testing.assert_close(targets.sum(-1), torch.ones(5))
        assert torch.equal(targets.argmax(-1), torch.arange(5))
    torch.testing.assert_close(pe.position_targets(3, 4, target_width=1e-30), torch.eye(3, 4))

import pytest
import torch

import posenc_lib as pe


def test_adds_one_row_per_position():
    torch.manual_seed(0)
    module = pe.LearnedPositionalEmbedding(max_len=8, d_model=4)
    x = torch.randn(3, 5, 4)
    torch.testing.assert_close(module(x), x + module.weight[:5])
    torch.testing.assert_close(module(x, offset=2), x + module.weight[2:7])


def test_gradients_reach_only_used_rows():
    module = pe.LearnedPositionalEmbedding(max_len=8, d_model=4)
    module(torch.zeros(1, 3, 4)).sum().backward()
    grad = module.weight.grad
    assert torch.all(grad[:3] == 1) and torch.all(grad[3:] == 0)


def test_past_max_len_is_a_clear_value_error_not_index_error():
    module = pe.LearnedPositionalEmbedding(max_len=512, d_model=4)
    module(torch.zeros(1, 512, 4))  # the last position still works
    with pytest.raises(ValueError, match=r"position 599 requested.*max_len=512"):
        module(torch.zeros(1, 600, 4))
    with pytest.raises(ValueError, match="offset"):
        module(torch.zeros(1, 2, 4), offset=-1)

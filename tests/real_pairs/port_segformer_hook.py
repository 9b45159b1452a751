"""port_segformer transforms: the paddle decoder keeps NCHW, so its per-stage "MLP" is a 1x1
Conv2D (weight [32, C, 1, 1]) where the torch decoder has an nn.Linear on tokens (weight [32, C],
the same element order). "reshape ..." reshapes the paddle array to the torch shape."""


def convert(transform, paddle_array, torch_array):
    if transform.startswith("reshape"):
        return paddle_array.reshape(torch_array.shape)
    return None
